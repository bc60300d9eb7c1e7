// Goal: the node-side guard (superseded-directory.ts) stops the node with a message that says what to
// do once the metadata or a peer's message shows a later directory of its node, and not before its
// member id is decided (a new directory runs the node id until the metadata group opens).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memberIdOf } from '../core/member-id.js';
import { checkMessageTo, checkSuperseded } from './superseded-directory.js';

test('stops on a later registration or a message to a later member, with what to do; not before its member is decided', () => {
  const stops: string[] = [];
  let decided = false;
  const d = { node: 2, diskId: () => 'old', member: () => 2, memberDecided: () => decided, stop: (msg: string) => void stops.push(msg) };
  assert.equal(checkSuperseded(d, { node: 2, disk: 'old/lost-1', firstGroup: 4 }), false);
  assert.equal(checkMessageTo(d, memberIdOf(2, 9), undefined), false, 'a new directory that has not made its member id yet');
  assert.equal(checkSuperseded(d, { node: 2, disk: 'new', firstGroup: 4, member: memberIdOf(2, 9) }), false, 'nor by a registration');
  decided = true;
  assert.equal(checkMessageTo(d, memberIdOf(2, 9), undefined), true);
  assert.equal(checkSuperseded(d, { node: 2, disk: 'new', firstGroup: 4, member: memberIdOf(2, 9) }), true);
  assert.equal(stops.length, 2);
  for (const m of stops) assert.match(m, /must not run again.*Move this directory aside \(or wipe it\) and start node 2 with an empty data directory/);
});
