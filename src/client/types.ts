/** Resource shapes of interfaces.md as the client sees them (property names normalised to camelCase). */

export type { ClearResult, PolicySettings, SoftwareSettings } from '../contract/instrument-contract';

export interface AuthResult {
  userName?: string;
  userId?: string;
  token: string;
  inactiveLogout?: number;
  logoutCountdown?: number;
  expiresIn?: number;
  passwordExpiresInDays?: number;
  notifyPasswordExpiresSoon?: boolean;
}

export interface Step {
  stepType: string;
  id: number;
  name: string;
  stepOrder: number;
  disabled?: boolean;
  [variantField: string]: unknown;
}

export interface StepBody {
  stepType: string;
  name?: string;
  id?: number;
  stepOrder?: number;
  disabled?: boolean;
  makeNameUnique?: boolean;
  [variantField: string]: unknown;
}

export interface ReorderItem {
  stepId: number;
  stepOrder: number;
}

export interface ListStepsQuery {
  offset?: number;
  limit?: number;
  includeFullStepData?: boolean;
  includeCustomLiquidSettings?: boolean;
}

export interface PagingQuery {
  offset?: number;
  limit?: number;
}

export interface ErrorRecord {
  id: string;
  code?: number;
  innerError?: unknown;
  message?: string;
  type?: string;
  severity?: string;
  date?: string;
  handledDateTime?: string | null;
  handled?: boolean;
  responses?: string[];
  groupId?: string;
  /** the response applied, where the instrument records it */
  selectedResponse?: string | null;
  [field: string]: unknown;
}

export interface ErrorList {
  totalItemCount: number;
  currentOffset: number;
  items: ErrorRecord[];
}

/** An element of errorResponses: observed as `{response}` objects, specified loosely; plain strings are accepted too. */
export type ErrorResponseOption = string | { response: string; [field: string]: unknown };

export interface PendingErrorDataItem {
  id: string;
  selectedResponse?: string | null;
  [field: string]: unknown;
}

export interface PendingError {
  id: string;
  title?: string;
  message?: string;
  errorResponses?: ErrorResponseOption[];
  selectedResponse?: string | null;
  timeStamp?: string;
  severity?: string;
  groupId?: string;
  errorData?: PendingErrorDataItem[];
  handled?: boolean;
  [field: string]: unknown;
}

export interface RuntimeErrorAnswer {
  id: string;
  groupId?: string;
  selectedResponse: string;
  errorData: { id: string; selectedResponse: string }[];
}

export interface ServiceRoutine {
  id: number;
  name: string | null;
  isRecommended: boolean;
  lastRun: string | null;
  [field: string]: unknown;
}

export interface InputValue {
  id: number;
  value: string;
}

export interface DetailedErrorRecovery {
  date: string;
  uuid: string;
  inputs: InputValue[];
  selectedActionId: number;
  selectedActionIsRecovery: boolean;
}

export interface ErrorRecovery {
  date: string;
  uuid: string;
  detailedErrorRecoveries: DetailedErrorRecovery[] | null;
  inputs: InputValue[] | null;
  selectedActionId: number;
  selectedActionIsRecovery: boolean;
  errorHandlingKey: string | null;
}

/** B's unhandled error; the spec leaves its fields open, so only `uuid` is relied upon. */
export interface InstrumentError {
  uuid: string;
  title?: string;
  message?: string;
  severity?: string;
  date?: string;
  actions?: { id: number; description?: string; isRecovery?: boolean; isDefault?: boolean; [field: string]: unknown }[];
  defaultActionId?: number;
  [field: string]: unknown;
}

export interface ResultWrapper<T> {
  data: T | null;
  message: string | null;
  success: boolean;
}
