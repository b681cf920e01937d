import { lastStepText, NotFoundError } from '@chunklog/chunk-core';
import type { TabStore } from '@chunklog/store';
import type { TabHolder } from '../holding/hold-tab';
import type { TurnDependencies } from '../turn/turn';
import { runTurn } from '../turn/turn-runner';
import type { SubagentRunner } from './task-tool';

/**
 * The `task` tool's engine: a child tab of the caller's, one turn on it through the same path
 * as any tab's (leased, logged, streamed; without the `task` tool), and its final text.
 */
export function createSubagentRunner(deps: {
  /** The parent tab's settings and tenant, and the child tab made from them. */
  store: Pick<TabStore, 'getTab' | 'tabTenant' | 'createTab'>;
  holder: TabHolder;
  ids: () => string;
  turnDependencies: TurnDependencies;
}): SubagentRunner {
  const { store, holder, ids } = deps;
  return async ({ parentTabId, prompt, title, signal }) => {
    const parent = await store.getTab(parentTabId);
    const tenantId = await store.tabTenant(parentTabId);
    if (!tenantId) throw new NotFoundError(`Tab ${parentTabId} not found`);
    const child = await store.createTab({
      tenantId,
      parentTabId,
      title: title ?? prompt.slice(0, 80),
      config: parent.config,
    });
    const turnId = ids();
    const { lease, held } = await holder.acquire(child.id, turnId);
    if (!held) throw new Error(`Could not take the new child tab ${child.id}`);
    let answer = '';
    const outcome = await holder.hold(
      held,
      turnId,
      async (session, cancel, interrupts) => {
        // A brand-new tab: any cancel of it stops the subagent.
        await holder.beginTurn(session, cancel, 0);
        const result = await runTurn({
          deps: { ...deps.turnDependencies, excludeTools: ['task'] },
          session,
          config: lease.tab.config,
          turnId,
          start: { kind: 'message', message: { chunkId: ids(), text: prompt } },
          cancel,
          interrupts,
        });
        answer = lastStepText(session.log);
        return result;
      },
      signal,
    );
    return { tabId: child.id, answer, reason: outcome?.reason ?? 'error' };
  };
}
