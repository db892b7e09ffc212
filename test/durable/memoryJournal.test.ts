import { memoryJournal } from '../../src/index.js';
import { journalStoreContract } from './journalStoreContract.js';

journalStoreContract('memoryJournal()', () => ({ store: memoryJournal() }));
