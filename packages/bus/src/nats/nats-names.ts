import { InvalidInputError } from '@chunklog/chunk-core';

const prefixPattern = /^[A-Za-z0-9_-]+$/;

/** How the bus's names map onto one NATS server shared by several deployments. */
export interface NatsNames {
  /** A contract subject as it travels: `<prefix>.<subject>`. */
  toWire(subject: string): string;
  /** A received subject as the contract names it, without the prefix. */
  fromWire(subject: string): string;
  /** The JetStream stream of a work queue: `<prefix>_<queue>`. */
  stream(queue: string): string;
  /** The one durable pull consumer every consumer of a queue shares. */
  consumer(queue: string): string;
  /** The subject the queue's stream stores. */
  queueSubject(queue: string): string;
}

/** The names under a subject prefix ('' for none); refuses a prefix NATS could not carry. */
export function natsNames(prefix: string): NatsNames {
  if (prefix !== '' && !prefixPattern.test(prefix)) {
    throw new InvalidInputError(`invalid subject prefix "${prefix}": use A-Z a-z 0-9 _ -`);
  }
  const subjectPrefix = prefix === '' ? '' : `${prefix}.`;
  const namePrefix = prefix === '' ? '' : `${prefix}_`;
  const toWire = (subject: string) => subjectPrefix + subject;
  return {
    toWire,
    fromWire: (subject) =>
      subject.startsWith(subjectPrefix) ? subject.slice(subjectPrefix.length) : subject,
    stream: (queue) => `${namePrefix}${queue}`,
    consumer: (queue) => `${namePrefix}${queue}-consumers`,
    queueSubject: (queue) => toWire(`chunklog.queue.${queue}`),
  };
}
