// The agent process of the durable cluster scenario: `node --import tsx scenarios.agent.ts`, configured
// by CLUSTER_AGENT (JSON of ClusterAgentConfig). Runs the fleet fault tests' `agentTurn` as a durable turn
// on redisJournal with remote tools, both on one ioredis Cluster of its own, printing "ready" once
// connected — until the test SIGKILLs it mid-turn.
import { Cluster } from 'ioredis';
import { redisJournal } from '../../../src/bullmq/index.js';
import { agentTurn } from '../support/fleetAgent.js';
import { CLUSTER_OPTIONS, clusterAgent, type ClusterAgentConfig } from './scenarios.support.js';

const config = JSON.parse(process.env['CLUSTER_AGENT']!) as ClusterAgentConfig;
const cluster = new Cluster(config.nodes.map((node) => ({ ...node })), CLUSTER_OPTIONS);
const journal = redisJournal({ connection: cluster, prefix: config.journalPrefix });
const agent = clusterAgent(config, cluster, journal);
await journal.read(config.turn); // connected before the turn starts
process.stdout.write('ready\n');
await agent.pipeline.run(agentTurn, { turn: config.turn });
process.stdout.write('done\n');
await agent.remote.close();
await journal.close();
await cluster.quit();
