import type { AddressInfo } from 'net';
import { SMTPServer, SMTPServerDataStream, SMTPServerSession } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  /** the message as received: headers and body */
  raw: string;
}

export interface SmtpReceiver {
  port: number;
  /** every mail received so far, in order */
  mails: ReceivedMail[];
  /** the next mail not yet taken by nextMail, waiting for it if need be */
  nextMail(): Promise<ReceivedMail>;
  close(): Promise<void>;
}

/** A local SMTP server on a random loopback port that accepts any login over plain TCP and keeps every mail. */
export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const mails: ReceivedMail[] = [];
  const unread: ReceivedMail[] = [];
  const waiting: ((m: ReceivedMail) => void)[] = [];
  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, cb) {
      cb(null, { user: auth.username });
    },
    onData(stream: SMTPServerDataStream, session: SMTPServerSession, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const mail: ReceivedMail = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        };
        mails.push(mail);
        const w = waiting.shift();
        if (w) w(mail);
        else unread.push(mail);
        cb();
      });
    },
  });
  // a client that goes away mid-connection (a Node-RED stopped) resets its socket: not the receiver's failure
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.server.address() as AddressInfo).port,
    mails,
    nextMail: () => {
      const m = unread.shift();
      return m ? Promise.resolve(m) : new Promise((resolve) => waiting.push(resolve));
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
