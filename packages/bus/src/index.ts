export type { Bus, Subscription, WorkItem } from './bus';
