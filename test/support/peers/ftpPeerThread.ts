/**
 * The FTP peer in a worker thread, for benchmarks: the server gets its own event loop, as a
 * real FTP server would have its own process, so the client's figures are not the server's
 * CPU time. The same file is the worker's entry point.
 */
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { startFtpLatencyProxy } from "./ftpLatencyProxy.ts";
import { startFtpPeer, type FtpPeerOptions } from "./ftpPeer.ts";

/** Options of the threaded peer: the peer's own, and a delay each way in front of it. */
export interface ThreadedFtpPeerOptions extends FtpPeerOptions {
  /** When set, clients reach the server through a proxy delaying each direction by this many ms. */
  latencyMs?: number;
}

/** A peer running in a worker thread. */
export interface ThreadedFtpPeer {
  host: string;
  port: number;
  username: string;
  password: string;
  root: string;
  close(): Promise<void>;
}

/** Starts the FTP peer (and its latency proxy, if asked) in a worker thread. */
export async function startFtpPeerThread(options: ThreadedFtpPeerOptions = {}): Promise<ThreadedFtpPeer> {
  const worker = new Worker(new URL(import.meta.url), { workerData: { ftpPeer: options } });
  const info = await new Promise<Omit<ThreadedFtpPeer, "close">>((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  return {
    ...info,
    async close() {
      worker.postMessage("close");
      await new Promise((resolve) => worker.once("exit", resolve));
    },
  };
}

if (!isMainThread && (workerData as { ftpPeer?: ThreadedFtpPeerOptions } | null)?.ftpPeer) {
  const { latencyMs, ...options } = (workerData as { ftpPeer: ThreadedFtpPeerOptions }).ftpPeer;
  const peer = await startFtpPeer(options);
  const proxy = latencyMs ? await startFtpLatencyProxy({ host: peer.host, port: peer.port }, latencyMs) : null;
  const front = proxy ?? peer;
  parentPort!.postMessage({ host: front.host, port: front.port, username: peer.username, password: peer.password, root: peer.root });
  parentPort!.once("message", () => {
    void (proxy?.close() ?? Promise.resolve()).then(() => peer.close()).then(() => process.exit(0));
  });
}
