/** Result text for a tool result whose recorded output is empty (the API rejects empty errors). */
export const EMPTY_TOOL_RESULT_TEXT = '(no output)';

/** The text the model sees for a tool result: strings as they are, anything else as JSON. */
export function toolResultText(result: unknown): string {
  let text: string;
  if (typeof result === 'string') text = result;
  else if (result === undefined || result === null) text = '';
  else {
    try {
      text = JSON.stringify(result) ?? String(result);
    } catch {
      text = String(result);
    }
  }
  return text.trim().length === 0 ? EMPTY_TOOL_RESULT_TEXT : text;
}
