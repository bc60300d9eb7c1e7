# The samples of a perf recording of the ArrayBuffer uprobe (arraybuffer-census.py has the set-up):
# (pid, bytes allocated, the sample's stack lines), read from `perf script`. Shared by
# arraybuffer-census.py and arraybuffer-copies.py.
import re, subprocess


def samples(path):
    out = subprocess.run(['perf', 'script', '-i', path], capture_output=True, text=True).stdout
    for block in out.split('\n\n'):
        lines = block.strip().split('\n')
        if not lines or 'bytes=' not in lines[0]:
            continue
        yield lines[0].split()[1], int(re.search(r'bytes=(\d+)', lines[0]).group(1)), lines[1:]
