/** A `tools/call` result as servers send it (older servers may leave `content` out). */
export interface McpCallResult {
  content?: readonly { type: string; [key: string]: unknown }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/**
 * What a tool_result chunk records for an MCP call: the text when the content is all text (what
 * the server meant the model to read), else the structured content, else the content blocks with
 * binary data left out (base64 images would fill the context with noise).
 */
export function mcpCallResultValue(result: McpCallResult): unknown {
  const content = result.content ?? [];
  if (content.length > 0 && content.every((block) => block.type === 'text')) {
    return content.map((block) => String(block.text ?? '')).join('\n\n');
  }
  if (content.length === 0) return result.structuredContent ?? '';
  return content.map((block) => {
    if (block.type === 'image' || block.type === 'audio') {
      const { data, ...rest } = block;
      return { ...rest, omitted: `${String(data ?? '').length} base64 characters` };
    }
    return block;
  });
}
