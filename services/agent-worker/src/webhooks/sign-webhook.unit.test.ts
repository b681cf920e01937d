import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { signWebhook } from './sign-webhook';

const secret = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;

describe('signWebhook', () => {
  it('signs so that the Standard Webhooks reference library verifies the request', () => {
    const body = JSON.stringify({ type: 'turn.completed', data: { text: 'ü and "quotes"' } });
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWebhook(secret, { messageId: 'msg_1', timestamp, body }),
    };
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('gives a signature the library refuses for another body, id or secret', () => {
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = signWebhook(secret, { messageId: 'msg_1', timestamp, body: '{"a":1}' });
    const headers = (id: string) => ({
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signature,
    });
    const otherSecret = `whsec_${Buffer.from('another secret, 32 bytes long!!!').toString('base64')}`;
    expect(() => new Webhook(secret).verify('{"a":2}', headers('msg_1'))).toThrow();
    expect(() => new Webhook(secret).verify('{"a":1}', headers('msg_2'))).toThrow();
    expect(() => new Webhook(otherSecret).verify('{"a":1}', headers('msg_1'))).toThrow();
  });
});
