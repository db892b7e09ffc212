// The types live in types/, the leaf room; this path re-exports them for its importers.
export type { JsonValue } from '../types/json.js';
export type {
  EventObserver,
  PipelineApprovalAnsweredEvent,
  PipelineApprovalRequestedEvent,
  PipelineDecidedEvent,
  PipelineEvent,
  PipelineEventBase,
  PipelineFinishedEvent,
  PipelineProgressEvent,
  PipelineReceivedEvent,
  PipelineResultEvent,
  PipelineRetryEvent,
  PipelineStartedEvent,
  ToolObserver,
} from '../types/events.js';
