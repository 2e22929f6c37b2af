import net from "node:net";

/** Binds `port` on `host` (0: any free port) and lets it go: the port it got, or undefined when `port` is in use. */
export function probePort(host: string, port: number): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", (err: NodeJS.ErrnoException) => (err.code === "EADDRINUSE" ? resolve(undefined) : reject(err)));
    s.listen(port, host, () => {
      const got = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(got));
    });
  });
}
