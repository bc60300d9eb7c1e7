# ArrayBuffer bytes per process by what made them, counted in copies of the entries' bytes: each
# process's bytes per kind divided by what the partition leader's encodeBatchesEntry allocated in the
# same recording (one copy of every entry). Unlike KB per request this needs no request count, so it
# stays comparable between builds on a loaded machine that served different numbers of requests.
# The recording is arraybuffer-census.py's (a uprobe on V8's ArrayBufferSweeper::Append; set-up there):
#   PERF=/tmp/abc PERF_EVENT=probe_node:abappend ROLES=1 SECONDS=5 node bench/scratch/cluster-cpu.mjs 1 new=. main=MAIN
#   python3 bench/scratch/arraybuffer-copies.py /tmp/abc/perf-new-r1.data
# Roles: the process with encodeBatchesEntry is the leader, one with spliceElements the arrival.
import sys, collections
from perf_samples import samples

kinds = [
    ('encodeBatchesEntry', 'the entry (encodeBatchesEntry)'),
    ('encodeEntryRecord', 'its log record (encodeEntryRecord)'),
    ('fromWireEntry', 'copy out of a received message (ownedBytes)'),
    ('compression-filter', 'grpc-js framing'),
    ('encodeMessageBatch', 'protobufjs finish: MessageBatch'),
    # The serializer inlined into the frames of a Raft stream write (grpc-js _write from peer.ts).
    ('transport/peer.js', 'protobufjs finish: MessageBatch'),
    ('encodeAppendStreamRequest', 'protobufjs finish: AppendStreamRequest'),
    ('encodeAppendStreamReply', 'protobufjs finish: AppendStreamReply'),
    ('stream-decoder', 'grpc-js reassembly'),
    ('spliceElements', 'spliceElements (publishing)'),
    ('Parser::', 'llhttp body'),
    ('content-type-parser', 'fastify body'),
    ('Http2StreamListener::OnStreamRead', 'HTTP/2 chunks'),
    ('byte-slabs', 'memory tail slabs (allocated once, kept)'),
    ('createPool', 'Buffer pool slabs'),
]
by = collections.defaultdict(collections.Counter)
for pid, b, stack_lines in samples(sys.argv[1]):
    lines = [''] + stack_lines
    stack = '\n'.join(stack_lines)
    kind = next((name for k, name in kinds if k in stack), None)
    if kind is None:
        js = [l.strip().split(None, 1)[1].split(' (')[0][:70] for l in lines[1:] if 'JS:' in l]
        # protobufjs's finish inlined into the caller's frame: name what it served.
        kind = 'other: ' + (js[0] if js else '?')
    by[pid][kind] += b
unit = max((c[kinds[0][1]] for c in by.values()), default=0)
if unit == 0:
    sys.exit('no encodeBatchesEntry in the recording: no leader to count copies by')
for pid, c in by.items():
    role = 'leader' if c[kinds[0][1]] > 0 else 'arrival' if c['spliceElements (publishing)'] > 0 else 'follower'
    total = sum(c.values())
    print(f'pid {pid} ({role}): {total / 1e6:.1f} MB, {total / unit:.2f} copies of the entries')
    for k, v in c.most_common(12):
        print(f'  {v / unit:5.2f}  {v / 1e6:7.2f} MB  {k}')
