/**
 * TEST-ONLY: a throwaway cluster CA and node certificates (subject CN brook-node-<id>) made with the
 * openssl command line in a temporary directory, for the mutual TLS tests.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
function openssl(dir, args) {
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}
export function makeTestCa(name = 'brook-test-ca') {
    const dir = mkdtempSync(join(tmpdir(), 'brook-certs-'));
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
    openssl(dir, ['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '30', '-subj', `/CN=${name}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    writeFileSync(join(dir, 'ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n');
    let n = 0;
    return {
        ca: readFileSync(join(dir, 'ca.pem')),
        issue(cn) {
            const base = `c${n++}`;
            openssl(dir, ['req', ...ec, '-keyout', `${base}.key`, '-out', `${base}.csr`, '-subj', `/CN=${cn}`]);
            openssl(dir, ['x509', '-req', '-in', `${base}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${base}.pem`, '-days', '30', '-extfile', 'ext']);
            return { cert: readFileSync(join(dir, `${base}.pem`)), key: readFileSync(join(dir, `${base}.key`)) };
        },
        remove() {
            rmSync(dir, { recursive: true, force: true });
        },
    };
}
//# sourceMappingURL=test-certs.js.map