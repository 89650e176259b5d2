import { registerNode } from '../../editor/register';

registerNode('lh-clear-errors', { icon: 'lh-clear-errors.svg' });
