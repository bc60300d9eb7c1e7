# Where a node allocates ArrayBuffer bytes (V8's "external memory": Buffers of 4 KB and more, pool slabs,
# HTTP/2 chunks), per process and per allocating stack, from a perf recording of a uprobe on V8's
# ArrayBufferSweeper::Append (every new ArrayBuffer passes there) that reads the buffer's accounted length.
# V8 of Node 20 counts these bytes, while they live, into the old generation's growth since the last
# mark-compact: on a node whose heap allocation is small (a partition leader or follower), they start
# the mark-compacts (docs/benchmarks.md, "Three nodes, 2026-11-28 morning: what starts the mark-compacts").
# Set up once per node binary (the +32 offset of the length in ArrayBufferExtension is V8 11.3's, Node 20):
#   N=$(readlink -f $(which node)); A=$(nm -C $N | awk '/ArrayBufferSweeper::Append\(/{print $1; exit}')
#   B=$(readelf -lW $N | awk '$1=="LOAD"{print $3; exit}')
#   perf probe -x $N -a "abappend=0x$(printf %x $((0x$A - B))) bytes=+32(%dx):u64"
# Then record the three nodes of bench/scratch/cluster-cpu.mjs and read the recording:
#   PERF=/tmp/abc PERF_EVENT=probe_node:abappend GC=1 ROLES=1 SECONDS=5 node bench/scratch/cluster-cpu.mjs 1 new=.
#   python3 bench/scratch/arraybuffer-census.py /tmp/abc/perf-new-r1.data [frames=4] [top=12] [requests=2500]
# (requests: those of the recorded seconds, RATE x SECONDS, to print KB per request.)
import sys, re, collections
from perf_samples import samples
f = sys.argv[1]
depth = int(sys.argv[2]) if len(sys.argv) > 2 else 4
top = int(sys.argv[3]) if len(sys.argv) > 3 else 12
requests = int(sys.argv[4]) if len(sys.argv) > 4 else 0
by_stack = collections.defaultdict(collections.Counter)
calls = collections.Counter()
total = collections.Counter()
n = collections.Counter()
for pid, b, stack_lines in samples(f):
    lines = [''] + stack_lines
    frames = []
    for l in lines[1:]:
        parts = l.strip().split(None, 1)
        if len(parts) < 2:
            continue
        sym = parts[1].rsplit(' (', 1)[0]
        # JS frames (--perf-basic-prof) and Node's own C++ frames; V8 internals and libc are skipped.
        if sym.startswith(('JS:', 'LazyCompile:', 'Function:')) or 'node::' in sym:
            sym = re.sub(r'file://\S*?/(dist|node_modules)/', '', sym)
            frames.append(sym.replace('LazyCompile:', '')[:90])
        if len(frames) >= depth:
            break
    key = ' < '.join(frames)
    by_stack[pid][key] += b
    calls[(pid, key)] += 1
    total[pid] += b
    n[pid] += 1
per = lambda b: f', {b / 1024 / requests:.1f} KB/req' if requests else ''
for pid in by_stack:
    print(f'pid {pid}: {total[pid] / 1e6:.1f} MB in {n[pid]} ArrayBuffers{per(total[pid])}')
    for k, v in by_stack[pid].most_common(top):
        print(f'  {v / 1e6:7.2f} MB {calls[(pid, k)]:7d}x{per(v)}  {k}')
