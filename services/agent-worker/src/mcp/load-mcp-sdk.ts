/**
 * The SDK's client side, loaded on first use: a worker no tab asks for an MCP server never pays
 * for loading it (seconds at start-up on a loaded machine).
 */
export function loadMcpSdk(): Promise<McpSdk> {
  loading ??= (async () => {
    const [client, http, stdio, types] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
      import('@modelcontextprotocol/sdk/client/stdio.js'),
      import('@modelcontextprotocol/sdk/types.js'),
    ]);
    return {
      Client: client.Client,
      StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
      StdioClientTransport: stdio.StdioClientTransport,
      getDefaultEnvironment: stdio.getDefaultEnvironment,
      McpError: types.McpError,
      ErrorCode: types.ErrorCode,
      ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
    };
  })();
  return loading;
}

export interface McpSdk {
  Client: typeof import('@modelcontextprotocol/sdk/client/index.js').Client;
  StreamableHTTPClientTransport: typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPClientTransport;
  StdioClientTransport: typeof import('@modelcontextprotocol/sdk/client/stdio.js').StdioClientTransport;
  getDefaultEnvironment: typeof import('@modelcontextprotocol/sdk/client/stdio.js').getDefaultEnvironment;
  McpError: typeof import('@modelcontextprotocol/sdk/types.js').McpError;
  ErrorCode: typeof import('@modelcontextprotocol/sdk/types.js').ErrorCode;
  ToolListChangedNotificationSchema: typeof import('@modelcontextprotocol/sdk/types.js').ToolListChangedNotificationSchema;
}

let loading: Promise<McpSdk> | undefined;
