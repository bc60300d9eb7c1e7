#!/usr/bin/env python3
# Shares of a `perf record -g` file of Brook nodes (run with --perf-basic-prof) by what the thread was
# doing: worker threads as GC, compiler or other; main threads by the outermost frame that names an
# activity (HTTP/1 in, HTTP/2 data received, HTTP/2 sends, the host's turn, thread-pool completions,
# timers), and within "HTTP/2 data received" and "thread-pool completions" which handlers ran from it.
# Per process too. docs/benchmarks.md, "Three nodes, 2026-11-27 evening".
#   python3 bench/scratch/perf-buckets.py perf.data
import collections, re, subprocess, sys

GC = r'Scavenge|MarkCompact|ConcurrentMarking|Sweeper|MarkingVisitor|Heap::|GCTracer|Evacuat|MinorMC|IncrementalMarking'
COMPILE = r'compiler::|Turbofan|Maglev|OptimizedCompilationJob|CompileLazy|BaselineBatchCompile|Parser::|Compiler::'
OUTER = [
    ('http-in (llhttp, fastify, the publish handler)', r'fastify|llhttp|_http_server|_http_common|parserOnBody|dist/api/'),
    ('http2 data received (gRPC)', r'Http2Session::OnStreamRead|nghttp2_session_mem_recv'),
    ('http2/gRPC sends', r'SendPendingData|MaybeScheduleWrite|grpc-js/build/src/call\.js|sendMessage'),
    ('host turn', r'node-host\.js'),
    ('thread-pool completions (fsync, RocksDB) and what runs from them', r'uv__work_done'),
    ('timers', r'listOnTimeout|processTimers'),
]
INNER = [
    ('Raft stream handler (onBatch)', r'onBatch .*dist/transport/server'),
    ('serving forwarded appends', r'appendParts|dist/transport/server\.js:(2[0-9][0-9]|3[0-9][0-9])|partition-appends|forward'),
    ('append stream client (replies)', r'append-stream\.js'),
    ('host, Raft, replicas', r'dist/broker|dist/raft'),
    ('api, publishing (a publish continuing)', r'dist/api|dist/publishing|fastify'),
    ('protobufjs decoding', r'protobufjs|deserialize|Deserialize'),
    ('grpc-js message machinery', r'decompressAndMaybePush|grpc-js'),
]

def samples(path):
    p = subprocess.Popen(['perf', 'script', '-i', path, '-F', 'comm,pid,tid,ip,sym,dso'], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    cur = None
    for line in p.stdout:
        if not line.strip():
            if cur: yield cur
            cur = None
            continue
        m = re.match(r'^\s*(\S+)\s+(\d+)/(\d+)\s*$', line)
        if m:
            if cur: yield cur
            cur = (m.group(2), m.group(2) == m.group(3), [])
        elif cur is not None:
            cur[2].append(line.strip())
    if cur: yield cur

total = 0
cats = collections.Counter()
per_pid = collections.Counter()
inner = {name: collections.Counter() for name, _ in OUTER}
for pid, main, frames in samples(sys.argv[1]):
    total += 1
    joined = '\n'.join(frames)
    if not main:
        cat = 'worker: GC' if re.search(GC, joined) else 'worker: compiler' if re.search(COMPILE, joined) else 'worker: other (libuv pool, RocksDB, kernel)'
    else:
        cat = None
        for i in range(len(frames) - 1, -1, -1):  # root first
            for name, rx in OUTER:
                if re.search(rx, frames[i]):
                    cat = name
                    leafward = '\n'.join(frames[:i])
                    inner[name][next((n for n, r in INNER if re.search(r, leafward)), '(native: nghttp2, node, libuv)')] += 1
                    break
            if cat: break
        if cat is None:
            cat = 'main: GC' if re.search(GC, joined) else 'main: compiler' if re.search(COMPILE, joined) else 'main: other'
        else:
            cat = 'main: ' + cat
    cats[cat] += 1
    per_pid[(pid, cat)] += 1

print(f'{sys.argv[1]}: {total} samples')
for k, v in cats.most_common():
    print(f'{100 * v / total:6.1f}% {k}')
    name = k[len('main: '):] if k.startswith('main: ') else None
    if name in inner and name in ('http2 data received (gRPC)', 'thread-pool completions (fsync, RocksDB) and what runs from them'):
        for n, c in inner[name].most_common():
            print(f'         {100 * c / total:5.1f}% {n}')
for pid in sorted({p for p, _ in per_pid}):
    t = sum(v for (q, _), v in per_pid.items() if q == pid)
    print(f'pid {pid}: {100 * t / total:.1f}%')
