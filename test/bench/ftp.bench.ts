/**
 * FTP deployment of 1,000 files of 4 KB to a local FTP server (ftp-srv on loopback, in a
 * worker thread so it does not share the client's event loop): our deployer, with its
 * connection pool, staging folder and swap, against a plain sequential basic-ftp upload of
 * the same files in the same run. Target (BENCHMARKS.md): ≥ 3× the sequential upload.
 *
 * Three settings, all reported:
 * - `ftp.deploy.files_per_s`: the peer on loopback with Nagle disabled on its control
 *   connections, as production servers run. There is no latency to hide, and ftp-srv
 *   spends most of a millisecond of CPU per file (a new passive listener per transfer), so
 *   the server's CPU is the ceiling for both sides: no client can reach 3× here.
 * - `ftp.deploy.files_per_s.rtt_2ms`: the same server behind a proxy that delays every chunk
 *   by 1 ms each way, control and data connections alike (test/support/peers/
 *   ftpLatencyProxy.ts): a server in the same region. A sequential upload waits out about
 *   three round trips per file, which is what the pool overlaps. This is the figure the
 *   target is about.
 * - `ftp.deploy.files_per_s.latency`: ftp-srv as shipped, whose replies wait out the
 *   client's delayed ACK (~40 ms per file), a distant server. One round, as the baseline
 *   takes ~45 s; skipped with `--quick`.
 */
import { Readable } from "node:stream";
import { Client } from "basic-ftp";
import { deployFtp, DEFAULT_FTP_CONNECTIONS } from "../../shared/deploy/ftp/ftpDeploy.ts";
import type { DeployFile } from "../../shared/deploy/types.ts";
import { startFtpPeerThread, type ThreadedFtpPeer } from "../support/peers/ftpPeerThread.ts";
import { ratioFigure, report, type Figure } from "./report.ts";

const FILES = 1000;
const SIZE = 4096;

const files: DeployFile[] = Array.from({ length: FILES }, (_, i) => ({ path: `dir${i % 10}/file${i}.txt`, content: Buffer.alloc(SIZE, 97 + (i % 26)) }));

/** The baseline: one connection, one file after the other, folders made once. */
async function sequential(peer: ThreadedFtpPeer, round: number): Promise<number> {
  const started = performance.now();
  const client = new Client();
  await client.access({ host: peer.host, port: peer.port, user: peer.username, password: peer.password });
  const made = new Set<string>();
  for (const file of files) {
    const dir = `/baseline${round}/${file.path.split("/")[0]}`;
    if (!made.has(dir)) {
      await client.ensureDir(dir);
      made.add(dir);
    }
    await client.uploadFrom(Readable.from(file.content), `/baseline${round}/${file.path}`);
  }
  client.close();
  return performance.now() - started;
}

/** Our deployer, default pool size. */
async function deployer(peer: ThreadedFtpPeer, round: number): Promise<number> {
  const started = performance.now();
  await deployFtp({
    deploymentId: round,
    files,
    config: { host: peer.host, port: peer.port, username: peer.username, password: peer.password, remote_path: `/site${round}` },
    log: async () => {},
    network: { allowPrivate: true },
  });
  return performance.now() - started;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const perSecond = (ms: number) => (FILES / ms) * 1000;

/** Median files/s of both sides over `rounds` alternating rounds. */
async function measure(noDelay: boolean, rounds: number, latencyMs?: number): Promise<{ ours: number; base: number }> {
  const peer = await startFtpPeerThread({ noDelay, ...(latencyMs ? { latencyMs } : {}) });
  try {
    if (noDelay) await deployer(peer, 0); // warm-up: JIT, passive ports, file system caches
    const base: number[] = [];
    const ours: number[] = [];
    for (let round = 1; round <= rounds; round += 1) {
      // Alternate the order so neither side always runs on a warmer server.
      if (round % 2) {
        base.push(await sequential(peer, round));
        ours.push(await deployer(peer, round));
      } else {
        ours.push(await deployer(peer, round));
        base.push(await sequential(peer, round));
      }
    }
    return { ours: perSecond(median(ours)), base: perSecond(median(base)) };
  } finally {
    await peer.close();
  }
}

const figures: Figure[] = [];
const loopback = await measure(true, 3);
figures.push(ratioFigure("ftp.deploy.files_per_s", loopback.ours, loopback.base, "files/s", 3, `pool of ${DEFAULT_FTP_CONNECTIONS}; loopback, bound by the server's CPU`));
const nearby = await measure(true, 3, 1);
figures.push(ratioFigure("ftp.deploy.files_per_s.rtt_2ms", nearby.ours, nearby.base, "files/s", 3, `pool of ${DEFAULT_FTP_CONNECTIONS}; 1 ms each way through a delaying proxy`));
if (!process.argv.includes("--quick")) {
  const latency = await measure(false, 1);
  figures.push(ratioFigure("ftp.deploy.files_per_s.latency", latency.ours, latency.base, "files/s", 3, `pool of ${DEFAULT_FTP_CONNECTIONS}; ftp-srv as shipped, ~40 ms per reply, one round`));
}
report(`FTP deployment: ${FILES} files of ${SIZE / 1024} KB to a local ftp-srv`, figures);
