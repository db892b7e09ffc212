import { z } from 'zod';
import { toolContract } from '../../../src/index.js';

/** The traced fleet test's contracts, shared by the agent (the test) and the worker process. */
export const lookup = toolContract({ name: 'lookup', description: 'Look a word up on a worker', input: z.object({ word: z.string() }), mode: 'parallel' });
export const explode = toolContract({ name: 'explode', description: 'Fail on a worker', input: z.object({}), mode: 'parallel' });
