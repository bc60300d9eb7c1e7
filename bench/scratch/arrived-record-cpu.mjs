// CPU of the CRC32C of a 12-event partition entry, and of framing the log record of such an entry as it
// arrived from another node and passed its check (what a follower stores), in one process.
//   node bench/scratch/arrived-record-cpu.mjs ABSOLUTE_ROOT_OF_A_BUILD
const root = process.argv[2];
const { crc32c } = await import(root + '/dist/log/crc32c.js');
const pe = await import(root + '/dist/log/partition-entry.js');
const rr = await import(root + '/dist/broker/raft-records.js');
const ev = Array.from({ length: 12 }, () => Buffer.alloc(526, 120));
const data = pe.encodeBatchesEntry(Date.now(), [{ requestId: 'r1', events: ev }]);
const key = Buffer.from('0200000007030000000000000009', 'hex');
let x = 0;
for (let i = 0; i < 2000; i++) x ^= crc32c(data);
const N = 20000;
let c0 = process.cpuUsage();
for (let i = 0; i < N; i++) x ^= crc32c(data);
let c = process.cpuUsage(c0);
console.log(`${root}: crc32c of a ${data.length}-byte entry ${((c.user + c.system) / N).toFixed(2)} us (${(data.length / ((c.user + c.system) / N)).toFixed(0)} MB/s)`);
const arrivedAll = Array.from({ length: N }, () => { const b = Buffer.from(data); pe.checkArrived(b); return b; });
for (let i = 0; i < 2000; i++) rr.encodeEntryRecord(key, { term: 1, index: i, type: 'normal', data: arrivedAll[i] });
c0 = process.cpuUsage();
for (let i = 0; i < N; i++) rr.encodeEntryRecord(key, { term: 1, index: i, type: 'normal', data: arrivedAll[i] });
c = process.cpuUsage(c0);
console.log(`${root}: the record of an arrived entry (${data.length} bytes): ${((c.user + c.system) / N).toFixed(2)} us`);
