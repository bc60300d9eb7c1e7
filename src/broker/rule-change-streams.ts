/**
 * Streams that a metadata change ends: when the readers of an event type or a subscription change,
 * all its consumers are disconnected (interface.md; those still authorized may reconnect); when a
 * consumer app or an event type is blacklisted for consumers, its streams end.
 */
import type { Logger } from 'pino';
import type { MetadataCommand } from '../metadata/commands.js';
import type { ApplyResult } from '../metadata/state-machine.js';
import type { OpenStreams } from '../consumption/open-streams.js';

/** Closes the streams `cmd` ends (none for most commands); returns how many were closed. */
export function closeStreamsAfterRuleChange(cmd: MetadataCommand, result: ApplyResult, open: OpenStreams, logger: Logger): number {
  if (!result.ok) return 0;
  let closed = 0;
  let why = '';
  if (cmd.op === 'event_type.update' && result.readersChanged === true) {
    why = `the readers of event type ${cmd.eventType.name} changed`;
    closed = open.closeWhere((s) => s.eventTypes.includes(cmd.eventType.name), why);
  } else if (cmd.op === 'subscription.update' && result.readersChanged === true) {
    why = `the readers of subscription ${cmd.id} changed`;
    closed = open.closeWhere((s) => s.subscription === cmd.id, why);
  } else if (cmd.op === 'blacklist.set' && cmd.blocked && cmd.type === 'CONSUMER_APP') {
    why = `application ${cmd.name} was blacklisted (CONSUMER_APP)`;
    closed = open.closeWhere((s) => s.app === cmd.name, why);
  } else if (cmd.op === 'blacklist.set' && cmd.blocked && cmd.type === 'CONSUMER_ET') {
    why = `event type ${cmd.name} was blacklisted (CONSUMER_ET)`;
    closed = open.closeWhere((s) => s.eventTypes.includes(cmd.name), why);
  }
  if (closed > 0) logger.info({ streams: closed, reason: why }, 'closed streams after a rule change');
  return closed;
}
