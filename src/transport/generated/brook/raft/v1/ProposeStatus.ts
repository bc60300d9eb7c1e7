// Original file: proto/raft.proto

export const ProposeStatus = {
  PROPOSE_STATUS_UNSPECIFIED: 'PROPOSE_STATUS_UNSPECIFIED',
  PROPOSE_STATUS_APPLIED: 'PROPOSE_STATUS_APPLIED',
  PROPOSE_STATUS_NOT_LEADER: 'PROPOSE_STATUS_NOT_LEADER',
  PROPOSE_STATUS_UNAVAILABLE: 'PROPOSE_STATUS_UNAVAILABLE',
} as const;

export type ProposeStatus =
  | 'PROPOSE_STATUS_UNSPECIFIED'
  | 0
  | 'PROPOSE_STATUS_APPLIED'
  | 1
  | 'PROPOSE_STATUS_NOT_LEADER'
  | 2
  | 'PROPOSE_STATUS_UNAVAILABLE'
  | 3

export type ProposeStatus__Output = typeof ProposeStatus[keyof typeof ProposeStatus]
