import { z } from 'zod';

/** Error types the API puts in `error.type`, in bodies and in mid-stream `error` events. */
export const ApiErrorTypeSchema = z.enum([
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'not_found_error',
  'request_too_large',
  'rate_limit_error',
  'api_error',
  'overloaded_error',
]);
export type ApiErrorType = z.infer<typeof ApiErrorTypeSchema>;

const statusTypes: Record<number, ApiErrorType> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

/** The API error type for an HTTP status, for statuses the simulator can inject. */
export function errorTypeForStatus(status: number): ApiErrorType {
  return statusTypes[status] ?? 'api_error';
}
