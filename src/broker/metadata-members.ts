/**
 * Carries out the replacement of metadata members on the metadata leader, around the pure plan
 * (metadata/member-replacement.ts): every round (a timer in main.ts, and after each applied
 * registration) the leader takes the plan's next configuration change. Nothing is remembered across
 * rounds but what was logged: the configuration and the applied registrations are the state, so a
 * restart or a new leader resumes where the replacement stood.
 */
import type { Logger } from 'pino';
import { memberLabel, nodeOfMember } from '../core/member-id.js';
import { nextReplacement, type MemberProgress, type ReplacementAction } from '../metadata/member-replacement.js';
import type { RaftMetadataGroup } from './metadata-group.js';

export class MetadataMemberReplacer {
  readonly #md: RaftMetadataGroup;
  readonly #logger: Logger;
  /** The last step logged (a waiting step is logged once, not every round). */
  #said = '';

  constructor(md: RaftMetadataGroup, logger: Logger) {
    this.#md = md;
    this.#logger = logger;
  }

  /** One round; returns the action taken (for tests). */
  round(): ReplacementAction {
    const g = this.#md.raftGroup;
    if (!g.isLeader()) return { kind: 'idle' };
    const st = g.raw.status();
    if (st.progress === undefined) return { kind: 'idle' };
    const progress = new Map<number, MemberProgress>([...st.progress].map(([id, p]) => [id, { match: p.match, recentActive: p.recentActive || id === g.self, state: p.state }]));
    const a = nextReplacement({ self: g.self, conf: g.conf, registrations: this.#md.state.disks(), progress, commit: st.commit });
    const say = (key: string, obj: object, msg: string) => {
      if (this.#said === key) return;
      this.#said = key;
      this.#logger.info({ raftId: g.self, term: st.term, ...obj }, msg);
    };
    switch (a.kind) {
      case 'idle':
        this.#said = '';
        break;
      case 'wait':
        say(`wait:${a.member}:${a.why}`, { member: a.member, node: nodeOfMember(a.member) }, `metadata member replacement waits: ${a.why}`);
        break;
      case 'confChange': {
        const res = g.raw.proposeConfChange(a.change);
        const what = a.replaced === undefined ? `metadata member of node ${nodeOfMember(a.by)} replaced by ${memberLabel(a.by)}` : `metadata member ${memberLabel(a.replaced)} replaced by ${memberLabel(a.by)}`;
        const obj = { change: a.change.type, member: a.change.nodeId, replaced: a.replaced, by: a.by };
        if (res.ok) {
          this.#md.kick();
          say(`change:${a.change.type}:${a.change.nodeId}`, { ...obj, index: res.lastIndex }, `${what}: ${a.why}`);
        } else say(`refused:${a.change.type}:${a.change.nodeId}:${res.reason}`, obj, `${what}: ${a.change.type} of ${memberLabel(a.change.nodeId)} not proposed yet (${res.reason})`);
        break;
      }
    }
    return a;
  }
}
