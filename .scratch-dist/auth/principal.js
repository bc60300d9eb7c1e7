export function subjectOf(p) {
    return { data_type: p.type, value: p.uid };
}
//# sourceMappingURL=principal.js.map