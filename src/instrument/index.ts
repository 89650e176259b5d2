export { InstrumentHome, type Slot, slot } from './home';
export { attachHome, findHome, type HomeAttachment, homeKey, homeOf, redisAuditReleased, resetHomes } from './homes';
