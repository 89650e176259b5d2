export { InstrumentHome, type Slot, slot } from './home';
export { attachedTo, attachHome, findHome, type HomeAttachment, homeKey, homeOf, resetHomes } from './homes';
