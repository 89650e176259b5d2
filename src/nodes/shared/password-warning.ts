/**
 * The session's password-expiry warning (at most once a day, from the login result) as lh-server logs it and as
 * lh-error-poll sends it on its connection output.
 */
import type { LiquidHandlerClient, PasswordWarning } from '../../client';
import type { InstrumentInfo } from './error-records';

export type PasswordExpiryMsg = {
  topic: string;
  event: 'password-expiry';
  instrument: InstrumentInfo;
  payload: { state: 'password-expiry'; instrument: string; user: string; daysLeft: number; expiresAt: string };
};

export function passwordExpiryMessage(warning: PasswordWarning, instrument: InstrumentInfo): PasswordExpiryMsg {
  return {
    topic: `${instrument.name}: ${warning.text}; change it on the instrument, then in the lh-server node`,
    event: 'password-expiry',
    instrument,
    payload: {
      state: 'password-expiry',
      instrument: instrument.name,
      user: warning.user,
      daysLeft: warning.daysLeft,
      expiresAt: new Date(warning.expiresAt).toISOString(),
    },
  };
}

/** Calls `fn` for each warning of this client until the returned function is called. */
export function onPasswordWarning(client: LiquidHandlerClient, fn: (warning: PasswordWarning) => void): () => void {
  client.on('password-warning', fn);
  return () => client.off('password-warning', fn);
}
