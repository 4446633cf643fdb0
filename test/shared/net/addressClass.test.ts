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
    // Public.
    ["93.184.216.34", null],
    ["8.8.8.8", null],
    ["172.32.0.1", null],
    ["100.128.0.1", null],
    ["2606:4700:4700::1111", null],
    ["::ffff:8.8.8.8", null],
    ["64:ff9b::8.8.8.8", null],
  ];
  for (const [address, expected] of cases) t.equal(classifyAddress(address), expected, address);
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
});
