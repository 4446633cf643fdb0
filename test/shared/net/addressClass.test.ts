import t from "tap";
import { classifyAddress } from "../../../shared/net/addressClass.ts";
import { parseLegacyIPv4 } from "../../../shared/net/ipAddress.ts";

t.test("every blocked class is recognised, public addresses are not", async (t) => {
  const cases: Array<[string, string | null]> = [
    ["127.0.0.1", "loopback"],
    ["127.255.1.2", "loopback"],
    ["::1", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["fd12:3456::1", "private"],
    ["fc00::1", "private"],
    ["169.254.1.1", "link_local"],
    ["fe80::abcd", "link_local"],
    ["100.64.0.1", "cgnat"],
    ["100.127.255.254", "cgnat"],
    ["224.0.0.251", "multicast"],
    ["ff02::1", "multicast"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["169.254.169.254", "metadata"],
    ["fd00:ec2::254", "metadata"],
    ["100.100.100.200", "metadata"],
    ["192.0.0.192", "metadata"],
    ["198.18.0.1", "reserved"],
    ["255.255.255.255", "reserved"],
    ["2001:db8::1", "reserved"],
    // IPv6 forms that carry an IPv4 address are judged by that address.
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:169.254.169.254", "metadata"],
    ["::ffff:a00:1", "private"],
    ["64:ff9b::10.0.0.1", "private"],
    ["2002:c0a8:0101::1", "private"],
    ["::127.0.0.1", "loopback"],
    // Each range of the tables once, so that no entry can lose its class unseen (an entry
    // whose class were empty would let its addresses pass as public).
    ["169.254.170.2", "metadata"],
    ["169.254.169.253", "metadata"],
    ["192.0.0.8", "reserved"],
    ["192.0.2.1", "reserved"],
    ["192.88.99.1", "reserved"],
    ["198.51.100.7", "reserved"],
    ["203.0.113.9", "reserved"],
    ["fd00:ec2::23", "metadata"],
    ["::2", "reserved"],
    ["64:ff9b:1::1", "private"],
    ["100::1", "reserved"],
    ["2001::1", "reserved"],
    ["fec0::1", "private"],
    // Brackets and a zone id are not part of the address.
    ["[::1]", "loopback"],
    ["[10.0.0.1]", "private"],
    ["fe80::1%eth0", "link_local"],
    ["::ffff:127.0.0.1%eth0", "loopback"],
    // The local-use NAT64 prefix is a range of its own, not the well-known prefix: what it
    // carries is not read as IPv4.
    ["64:ff9b:1::808:808", "private"],
    // Public.
    ["93.184.216.34", null],
    ["8.8.8.8", null],
    ["172.32.0.1", null],
    ["100.128.0.1", null],
    ["2606:4700:4700::1111", null],
    ["::ffff:8.8.8.8", null],
    ["64:ff9b::8.8.8.8", null],
    // One byte off an embedding prefix is a plain IPv6 address: the IPv4 part is not read
    // (each of these would be "private" if it were).
    ["2606:4700::ffff:a00:1", null],
    ["::ff:a00:1", null],
    ["::ff00:a00:1", null],
    ["164:ff9b::a00:1", null],
    ["65:ff9b::a00:1", null],
    ["64:9b::a00:1", null],
    ["64:ff00::a00:1", null],
    ["2606:9b::a00:1", null],
    ["2606:ff9b::a00:1", null],
  ];
  for (const [address, expected] of cases) t.equal(classifyAddress(address), expected, address);
});

t.test("text that is not an IP literal is refused, half brackets included", async (t) => {
  for (const text of ["example.com", "[1::1", "1::1]", "[::1]x", "2130706433"]) {
    t.throws(() => classifyAddress(text), new TypeError(`not an IP address: ${text}`), text);
  }
});

t.test("legacy IPv4 notations are read as inet_aton reads them", async (t) => {
  t.equal(parseLegacyIPv4("2130706433"), "127.0.0.1", "one decimal number");
  t.equal(parseLegacyIPv4("0x7f000001"), "127.0.0.1", "one hex number");
  t.equal(parseLegacyIPv4("0x7f.1"), "127.0.0.1", "hex first byte, rest in 24 bits");
  t.equal(parseLegacyIPv4("0177.0.0.1"), "127.0.0.1", "octal byte");
  t.equal(parseLegacyIPv4("127.1"), "127.0.0.1");
  t.equal(parseLegacyIPv4("10.1.1"), "10.1.0.1");
  t.equal(parseLegacyIPv4("017700000001"), "127.0.0.1", "one octal number");
  t.equal(parseLegacyIPv4("127.0.0.1."), "127.0.0.1", "a trailing dot");
  t.equal(parseLegacyIPv4("example.com"), null);
  t.equal(parseLegacyIPv4("1.2.3.4.5"), null);
  t.equal(parseLegacyIPv4("256.1.1.1"), null);
  t.equal(parseLegacyIPv4("4294967296"), null, "beyond 32 bits");
  t.equal(parseLegacyIPv4("08.1.1.1"), null, "8 is no octal digit");
  t.equal(parseLegacyIPv4("0778.0.0.1"), null, "an octal part ends at its last digit, not before");
  t.equal(parseLegacyIPv4("0x"), "0.0.0.0", "a bare 0x is zero");
  t.equal(parseLegacyIPv4("0x7g"), null, "a hex part is hex to its end");
  t.equal(parseLegacyIPv4("10x5"), null, "0x only at the start of a part");
  t.equal(parseLegacyIPv4("255.255.255.255"), "255.255.255.255", "255 is a byte");
  t.equal(parseLegacyIPv4("127.0.0.1.0"), null, "five parts, even when the last is 0");
});
