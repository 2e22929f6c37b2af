import net from "node:net";

export type Received = { from: string; to: string[]; data: string };
export type SmtpListener = { url: string; mails: Received[]; close: () => Promise<void> };

/**
 * A tiny SMTP server on loopback (no TLS, no auth, no extensions): enough of RFC 5321 for
 * nodemailer to hand it a message, which it keeps in `mails`.
 */
export async function startSmtpListener(): Promise<SmtpListener> {
  const mails: Received[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    let buffer = "";
    let inData = false;
    let mail: Received = { from: "", to: [], data: "" };
    const say = (line: string) => socket.write(`${line}\r\n`);
    say("220 localhost test SMTP");
    socket.on("data", (chunk) => {
      buffer += chunk.toString("utf8");
      for (;;) {
        if (inData) {
          const end = buffer.indexOf("\r\n.\r\n");
          if (end < 0) return;
          mail.data = buffer.slice(0, end);
          buffer = buffer.slice(end + 5);
          inData = false;
          mails.push(mail);
          mail = { from: "", to: [], data: "" };
          say("250 queued");
          continue;
        }
        const eol = buffer.indexOf("\r\n");
        if (eol < 0) return;
        const line = buffer.slice(0, eol);
        buffer = buffer.slice(eol + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === "EHLO" || verb === "HELO") say("250 localhost");
        else if (verb === "MAIL") (mail.from = line.slice(10).trim(), say("250 ok"));
        else if (verb === "RCPT") (mail.to.push(line.slice(8).trim()), say("250 ok"));
        else if (verb === "DATA") (inData = true, say("354 go on"));
        else if (verb === "QUIT") (say("221 bye"), socket.end());
        else if (verb === "RSET" || verb === "NOOP") say("250 ok");
        else say("502 not implemented");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
