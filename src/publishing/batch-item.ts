/** BatchItemResponse, the per-event answer of 207 and 422 publish responses (interface.md). */
export type PublishingStatus = 'submitted' | 'failed' | 'aborted';
export type PublishingStep = 'none' | 'validating' | 'partitioning' | 'enriching' | 'publishing';

export interface BatchItemResponse {
  eid?: string;
  publishing_status: PublishingStatus;
  step: PublishingStep;
  /** Absent on aborted items: their status says why. */
  detail?: string;
}
