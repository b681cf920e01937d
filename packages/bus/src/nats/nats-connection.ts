import {
  type JetStreamClient,
  type JetStreamManager,
  jetstream,
  jetstreamManager,
} from '@nats-io/jetstream';
import { connect, type NatsConnection, type Status } from '@nats-io/transport-node';
import { BusUnavailableError } from '../bus-errors';
import type { BusLogger } from '../bus-logger';

/** One connection to NATS with JetStream, and what the bus needs to know about its health. */
export interface NatsLink {
  readonly connection: NatsConnection;
  readonly jetStream: JetStreamClient;
  readonly manager: JetStreamManager;
  /** False from a noticed disconnect until the reconnect, and after close. */
  isConnected(): boolean;
  /** The server answers a round trip within 1 s. */
  ready(): Promise<boolean>;
  /** Drains what is in flight, or closes at once when the link is down. */
  close(): Promise<void>;
}

export interface NatsLinkOptions {
  servers: string | string[];
  name: string;
  reconnectWaitMs: number;
  jetStreamTimeoutMs: number;
  logger: BusLogger;
}

/**
 * Connects, and reconnects forever: every `reconnectWaitMs` plus up to 250 ms of jitter. Fails
 * with BusUnavailableError when the server runs without JetStream.
 */
export async function openNatsLink(options: NatsLinkOptions): Promise<NatsLink> {
  const { logger } = options;
  const connection = await connect({
    servers: options.servers,
    name: options.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: options.reconnectWaitMs,
    reconnectJitter: 250,
    // Notice a silently dead server within ~30 s rather than the default 4 minutes.
    pingInterval: 10_000,
    maxPingOut: 3,
  });
  const jetStream = jetstream(connection, { timeout: options.jetStreamTimeoutMs });
  let manager: JetStreamManager;
  try {
    manager = await jetstreamManager(connection, { timeout: options.jetStreamTimeoutMs });
  } catch (error) {
    await connection.close();
    throw new BusUnavailableError('JetStream is not enabled on the NATS server', { cause: error });
  }

  let connected = true;
  void watchStatus(connection.status());

  async function watchStatus(statuses: AsyncIterable<Status>): Promise<void> {
    for await (const status of statuses) {
      switch (status.type) {
        case 'disconnect':
          connected = false;
          logger.warn({ server: status.server }, 'NATS disconnected; reconnecting');
          break;
        case 'reconnect':
          connected = true;
          logger.info({ server: status.server }, 'NATS reconnected');
          break;
        case 'error':
          logger.error({ err: status.error }, 'NATS error');
          break;
        case 'slowConsumer':
          logger.warn({ pending: status.pending }, 'NATS subscription is a slow consumer');
          break;
        case 'close':
          connected = false;
          break;
        case 'reconnecting':
        case 'update':
        case 'ldm':
        case 'ping':
        case 'staleConnection':
        case 'forceReconnect':
          break;
        default: {
          const unreachable: never = status;
          logger.warn({ status: unreachable }, 'unknown NATS status');
        }
      }
    }
  }

  const isConnected = () => connected && !connection.isClosed();

  return {
    connection,
    jetStream,
    manager,
    isConnected,
    async ready() {
      if (!isConnected()) return false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), 1_000);
      });
      try {
        // A round trip proves the server answers, not merely that a socket is open.
        return await Promise.race([connection.rtt().then(() => true), timeout]);
      } catch {
        return false;
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      if (connection.isClosed()) return;
      // Drain delivers what is in flight and flushes pending publishes; a dead link cannot drain.
      if (connected) await connection.drain().catch(() => connection.close());
      else await connection.close();
    },
  };
}
