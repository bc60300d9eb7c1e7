/** A binary min-heap: the simulator's event queue, ordered by (time, sequence number). */
export class MinHeap {
    #items = [];
    #less;
    constructor(less) {
        this.#less = less;
    }
    get size() {
        return this.#items.length;
    }
    push(item) {
        const a = this.#items;
        a.push(item);
        let i = a.length - 1;
        while (i > 0) {
            const p = (i - 1) >> 1;
            if (!this.#less(a[i], a[p]))
                break;
            [a[i], a[p]] = [a[p], a[i]];
            i = p;
        }
    }
    peek() {
        return this.#items[0];
    }
    pop() {
        const a = this.#items;
        if (a.length === 0)
            return undefined;
        const top = a[0];
        const last = a.pop();
        if (a.length > 0) {
            a[0] = last;
            let i = 0;
            for (;;) {
                const l = 2 * i + 1;
                const r = l + 1;
                let m = i;
                if (l < a.length && this.#less(a[l], a[m]))
                    m = l;
                if (r < a.length && this.#less(a[r], a[m]))
                    m = r;
                if (m === i)
                    break;
                [a[i], a[m]] = [a[m], a[i]];
                i = m;
            }
        }
        return top;
    }
}
//# sourceMappingURL=heap.js.map