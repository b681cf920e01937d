/** One request to each route of a tab, with a body that passes validation where one is needed. */
export interface RouteCall {
  method: string;
  path: string;
  body?: unknown;
}

/** Every route scoped to one tab (streams included, WebSocket aside). */
export function tabRouteCalls(tabId: string): RouteCall[] {
  return [
    { method: 'GET', path: `/v1/tabs/${tabId}` },
    { method: 'PATCH', path: `/v1/tabs/${tabId}`, body: { title: 'renamed' } },
    { method: 'DELETE', path: `/v1/tabs/${tabId}` },
    { method: 'POST', path: `/v1/tabs/${tabId}/messages`, body: { text: 'hi' } },
    { method: 'POST', path: `/v1/tabs/${tabId}/cancel` },
    { method: 'POST', path: `/v1/tabs/${tabId}/compact` },
    { method: 'GET', path: `/v1/tabs/${tabId}/chunks` },
    { method: 'GET', path: `/v1/tabs/${tabId}/context` },
    { method: 'POST', path: `/v1/tabs/${tabId}/stream-tickets` },
    { method: 'GET', path: `/v1/tabs/${tabId}/events` },
  ];
}

/** Every route of the webhook API, the endpoint-scoped ones on `endpointId`. */
export function webhookRouteCalls(endpointId: string): RouteCall[] {
  return [
    {
      method: 'POST',
      path: '/v1/webhooks',
      body: { url: 'https://example.com/hook', eventTypes: ['turn.completed'] },
    },
    { method: 'GET', path: '/v1/webhooks' },
    { method: 'DELETE', path: `/v1/webhooks/${endpointId}` },
    { method: 'POST', path: `/v1/webhooks/${endpointId}/rotate-secret` },
    { method: 'GET', path: `/v1/webhooks/${endpointId}/deliveries` },
  ];
}

/**
 * Every authenticated route: the tab collection, every route of `tabId`, and the webhook API
 * (on an endpoint id nobody has).
 */
export function apiRouteCalls(tabId: string): RouteCall[] {
  return [
    { method: 'POST', path: '/v1/tabs', body: {} },
    { method: 'GET', path: '/v1/tabs' },
    { method: 'GET', path: '/v1/search?q=secret' },
    ...tabRouteCalls(tabId),
    ...webhookRouteCalls('00000000-0000-4000-8000-000000000000'),
  ];
}
