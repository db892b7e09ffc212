// An agent process of the fleet fault tests: `node --import tsx agentProcess.ts`, configured by
// FLEET_AGENT (JSON of AgentConfig). Runs `agentTurn` as a durable turn on redisJournal with remote
// tools (`fleetAgent`), printing "ready" once connected — until the test SIGKILLs it mid-turn.
import { redisJournal } from '../../../src/bullmq/index.js';
import { fleetAgent, type AgentConfig, agentTurn } from './fleetAgent.js';

const config = JSON.parse(process.env['FLEET_AGENT']!) as AgentConfig;
const journal = redisJournal({ connection: config.url, prefix: config.journalPrefix });
const agent = fleetAgent(config, journal);
await journal.read(config.turn); // connected before the turn starts
process.stdout.write('ready\n');
await agent.pipeline.run(agentTurn, { turn: config.turn });
process.stdout.write('done\n');
await agent.remote.close();
await journal.close();
