// Original file: proto/raft.proto

export const EntryType = {
  ENTRY_TYPE_NORMAL: 'ENTRY_TYPE_NORMAL',
  ENTRY_TYPE_CONF_CHANGE: 'ENTRY_TYPE_CONF_CHANGE',
} as const;

export type EntryType =
  | 'ENTRY_TYPE_NORMAL'
  | 0
  | 'ENTRY_TYPE_CONF_CHANGE'
  | 1

export type EntryType__Output = typeof EntryType[keyof typeof EntryType]
