// Original file: proto/raft.proto
export const EntryType = {
    ENTRY_TYPE_NORMAL: 'ENTRY_TYPE_NORMAL',
    ENTRY_TYPE_CONF_CHANGE: 'ENTRY_TYPE_CONF_CHANGE',
};
//# sourceMappingURL=EntryType.js.map