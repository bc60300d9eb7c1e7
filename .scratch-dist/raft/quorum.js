/**
 * The largest index that a majority of `voters` has acknowledged, given each voter's acknowledged
 * index (absent voters count as 0). An empty configuration cannot commit anything: it answers 0.
 */
export function committedIndex(voters, acked) {
    const n = voters.length;
    if (n === 0)
        return 0;
    const srt = new Array(n);
    for (let i = 0; i < n; i++)
        srt[i] = acked(voters[i]) ?? 0;
    srt.sort((a, b) => b - a);
    // Sorted descending, the entry at position floor(n/2) is acknowledged by positions 0..floor(n/2),
    // that is by floor(n/2) + 1 voters: a majority.
    return srt[Math.floor(n / 2)];
}
/** The outcome of an election given the votes received so far (true = granted). */
export function voteResult(voters, votes) {
    if (voters.length === 0)
        return 'won'; // vacuous: callers never campaign without voters
    let granted = 0;
    let rejected = 0;
    for (const id of voters) {
        const v = votes.get(id);
        if (v === true)
            granted++;
        else if (v === false)
            rejected++;
    }
    const q = Math.floor(voters.length / 2) + 1;
    if (granted >= q)
        return 'won';
    if (voters.length - rejected >= q)
        return 'pending';
    return 'lost';
}
export function majority(n) {
    return Math.floor(n / 2) + 1;
}
//# sourceMappingURL=quorum.js.map