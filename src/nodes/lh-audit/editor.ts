import { registerNode } from '../../editor/register';

// Without an instrument, the records of every instrument.
registerNode('lh-audit', { icon: 'lh-audit.svg', server: 'optional', inputs: 0 });
