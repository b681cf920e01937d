/**
 * The Messages API's request checks that chunklog depends on (the requests the API rejects with
 * 400 `invalid_request_error`), as one total function: the simulator answers 400
 * `invalid_request_error` with these messages, and the wire builder's tests prove its output
 * passes. Signatures are checked apart (find-signature-violation.ts: they need the key).
 */
import { type CompactionErrorCode, TOOL_NAME_PATTERN } from '@chunklog/chunk-core';

/**
 * One reason the API would reject a request: a dotted path (`messages.3.content.0`) and why,
 * and for the compaction rules the `error.details.error_code` the API names it by.
 */
export type RequestViolation = { path: string; message: string; code?: CompactionErrorCode };

/** What the request was sent with, beside its body. */
export type ValidateRequestOptions = {
  /**
   * Whether the `compact-2026-09-04` beta is on (the `anthropic-beta` header). Without it the
   * API knows neither the `compaction` parameter nor the block. Default true.
   */
  compactionBeta?: boolean;
};

/** The maximum number of `cache_control` breakpoints one request may carry. */
export const MAX_CACHE_BREAKPOINTS = 4;

/** Pattern every `tool_use` id (and so every `tool_result.tool_use_id`) must match. */
export const TOOL_USE_ID_PATTERN = /^[a-zA-Z0-9_-]+$/;

const messageBlockTypes = [
  'text',
  'image',
  'document',
  'search_result',
  'thinking',
  'redacted_thinking',
  'tool_use',
  'tool_result',
] as const;
const compactionMessages = {
  compaction_block_ambiguous:
    '`messages` holds more than one `compaction` block with content. Send only the block the conversation returned last.',
  compaction_block_misplaced:
    'The `compaction` block must be the first block of the conversation, and cannot be in a `system` message.',
  compaction_incomplete_turn:
    'The compaction request ends on an `assistant` turn that is not finished.',
  compaction_nothing_to_summarize:
    '`messages` holds no `user` or `assistant` content to summarize or adopt.',
} as const;
const userOnlyBlockTypes = new Set(['image', 'document', 'search_result', 'tool_result']);
const assistantOnlyBlockTypes = new Set(['thinking', 'redacted_thinking', 'tool_use']);
const thinkingBlockTypes = new Set(['thinking', 'redacted_thinking']);
const knownThinkingTypes = new Set(['enabled', 'disabled', 'adaptive', 'between_tools']);

type JsonObject = Record<string, unknown>;
type LocatedBlock = { block: JsonObject; path: string };
/** Consecutive same-role messages, merged as the API merges them before its checks. */
type MessageGroup = { role: 'user' | 'assistant'; blocks: LocatedBlock[]; lastIndex: number };

function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isBlank(text: string): boolean {
  return text.trim().length === 0;
}

/** Every reason the API would answer 400 to `request`; empty when it would accept it. Never throws. */
export function validateRequest(
  request: unknown,
  options: ValidateRequestOptions = {},
): RequestViolation[] {
  const violations: RequestViolation[] = [];
  const report: Report = (path, message, code) =>
    violations.push(code === undefined ? { path, message } : { path, message, code });
  const compactionBeta = options.compactionBeta ?? true;

  if (!isRecord(request)) {
    report('', 'request body must be a JSON object');
    return violations;
  }

  let cacheControlCount = 0;
  const countCacheControl = (holder: JsonObject, path: string) => {
    const cacheControl = holder.cache_control;
    if (cacheControl === undefined || cacheControl === null) return;
    cacheControlCount += 1;
    if (!isRecord(cacheControl) || cacheControl.type !== 'ephemeral') {
      report(`${path}.cache_control.type`, "Input should be 'ephemeral'");
    } else if (
      cacheControl.ttl !== undefined &&
      cacheControl.ttl !== '5m' &&
      cacheControl.ttl !== '1h'
    ) {
      report(`${path}.cache_control.ttl`, "Input should be '5m' or '1h'");
    }
  };

  if (request.model === undefined) report('model', 'Field required');
  else if (typeof request.model !== 'string' || request.model.length === 0) {
    report('model', 'Input should be a non-empty string');
  }

  const maxTokens = request.max_tokens;
  if (maxTokens === undefined) report('max_tokens', 'Field required');
  else if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1) {
    report('max_tokens', 'Input should be an integer greater than or equal to 1');
  }

  validateSystem(request.system, report, countCacheControl, compactionBeta);
  const toolNames = validateTools(request.tools, report, countCacheControl);
  validateToolChoice(request.tool_choice, toolNames, report);
  const thinkingEnabled = validateThinking(request.thinking, maxTokens, report);
  validateStopSequences(request.stop_sequences, report);

  const conversation = validateMessages(
    request.messages,
    report,
    countCacheControl,
    compactionBeta,
  );
  if (conversation !== undefined) {
    validateConversation(conversation.groups, thinkingEnabled, report);
  }
  validateCompactionParameter(request, conversation, compactionBeta, report);

  if (cacheControlCount > MAX_CACHE_BREAKPOINTS) {
    report(
      '',
      `A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found ${cacheControlCount}.`,
    );
  }
  return violations;
}

type Report = (path: string, message: string, code?: CompactionErrorCode) => void;
type CountCacheControl = (holder: JsonObject, path: string) => void;

function validateTextBlock(block: JsonObject, path: string, report: Report): void {
  if (typeof block.text !== 'string') report(`${path}.text`, 'Input should be a valid string');
  else if (block.text.length === 0) report(path, 'text content blocks must be non-empty');
  else if (isBlank(block.text)) {
    report(path, 'text content blocks must contain non-whitespace text');
  }
}

function validateSystem(
  system: unknown,
  report: Report,
  countCacheControl: CountCacheControl,
  compactionBeta: boolean,
) {
  if (system === undefined || typeof system === 'string') return;
  if (!Array.isArray(system)) {
    report('system', 'Input should be a valid string or a list of text blocks');
    return;
  }
  system.forEach((block, index) => {
    const path = `system.${index}`;
    if (compactionBeta && isRecord(block) && block.type === 'compaction') {
      const code = 'compaction_block_misplaced';
      report(path, compactionMessages[code], code);
      return;
    }
    if (!isRecord(block) || block.type !== 'text') {
      report(`${path}.type`, "Input should be 'text'");
      return;
    }
    validateTextBlock(block, path, report);
    countCacheControl(block, path);
  });
}

function validateTools(
  tools: unknown,
  report: Report,
  countCacheControl: CountCacheControl,
): Set<string> {
  const names = new Set<string>();
  if (tools === undefined) return names;
  if (!Array.isArray(tools)) {
    report('tools', 'Input should be a valid list');
    return names;
  }
  tools.forEach((tool, index) => {
    const path = `tools.${index}`;
    if (!isRecord(tool)) {
      report(path, 'Input should be a valid dictionary');
      return;
    }
    countCacheControl(tool, path);
    // Server tools (`{ type: 'web_search_20250305', ... }`) have their own schemas; only custom
    // tools are checked here.
    const isCustom = tool.type === undefined || tool.type === 'custom';
    if (typeof tool.name !== 'string' || !TOOL_NAME_PATTERN.test(tool.name)) {
      report(`${path}.name`, "String should match pattern '^[a-zA-Z0-9_-]{1,64}$'");
    } else if (names.has(tool.name)) {
      report('tools', 'Tool names must be unique.');
    } else {
      names.add(tool.name);
    }
    if (!isCustom) return;
    if (tool.input_schema === undefined) report(`${path}.input_schema`, 'Field required');
    else if (!isRecord(tool.input_schema) || tool.input_schema.type !== 'object') {
      report(`${path}.input_schema.type`, "Input should be 'object'");
    }
    if (tool.description !== undefined && typeof tool.description !== 'string') {
      report(`${path}.description`, 'Input should be a valid string');
    }
  });
  return names;
}

function validateToolChoice(toolChoice: unknown, toolNames: Set<string>, report: Report): void {
  if (toolChoice === undefined) return;
  if (!isRecord(toolChoice)) {
    report('tool_choice', 'Input should be a valid dictionary');
    return;
  }
  switch (toolChoice.type) {
    case 'auto':
    case 'any':
    case 'none':
      return;
    case 'tool':
      if (typeof toolChoice.name !== 'string') report('tool_choice.name', 'Field required');
      else if (!toolNames.has(toolChoice.name)) {
        report('tool_choice.name', `Tool '${toolChoice.name}' not found in provided tools`);
      }
      return;
    default:
      report('tool_choice.type', "Input should be 'auto', 'any', 'tool' or 'none'");
  }
}

/** Checks the thinking setting; answers whether thinking is on (which adds a message rule). */
function validateThinking(thinking: unknown, maxTokens: unknown, report: Report): boolean {
  if (thinking === undefined) return false;
  if (!isRecord(thinking) || typeof thinking.type !== 'string') {
    report('thinking.type', 'Field required');
    return false;
  }
  if (!knownThinkingTypes.has(thinking.type)) {
    report('thinking.type', "Input should be 'enabled', 'disabled', 'adaptive' or 'between_tools'");
    return false;
  }
  if (thinking.type === 'enabled') {
    const budget = thinking.budget_tokens;
    if (typeof budget !== 'number' || !Number.isInteger(budget)) {
      report('thinking.enabled.budget_tokens', 'Field required');
    } else if (budget < 1024) {
      report('thinking.enabled.budget_tokens', 'Input should be greater than or equal to 1024');
    } else if (typeof maxTokens === 'number' && maxTokens <= budget) {
      report('max_tokens', '`max_tokens` must be greater than `thinking.budget_tokens`.');
    }
  }
  return thinking.type === 'enabled' || thinking.type === 'adaptive';
}

function validateStopSequences(stopSequences: unknown, report: Report): void {
  if (stopSequences === undefined) return;
  if (!Array.isArray(stopSequences)) {
    report('stop_sequences', 'Input should be a valid list');
    return;
  }
  stopSequences.forEach((sequence, index) => {
    if (typeof sequence !== 'string' || isBlank(sequence)) {
      report(`stop_sequences.${index}`, 'each stop sequence must contain non-whitespace');
    }
  });
}

/** What the cross-message rules need: the role groups, and how the messages end. */
type Conversation = {
  groups: MessageGroup[];
  /** Whether the first block of the conversation is a compaction block with content. */
  startsWithCompaction: boolean;
  /** The role of the last message, and whether it holds only the leading compaction block. */
  lastRole: 'user' | 'assistant' | undefined;
  lastIsCompactionOnly: boolean;
  lastIndex: number;
};

/**
 * Checks each message and block on its own; answers the role groups, or nothing if unusable.
 * A compaction block with content opens the conversation apart from the turns: it is in no
 * group, so the rules on turns (first message from the user, thinking first) apply after it.
 * Compaction blocks whose content is null are no-ops to the API and are skipped.
 */
function validateMessages(
  messages: unknown,
  report: Report,
  countCacheControl: CountCacheControl,
  compactionBeta: boolean,
): Conversation | undefined {
  if (messages === undefined) {
    report('messages', 'Field required');
    return undefined;
  }
  if (!Array.isArray(messages)) {
    report('messages', 'Input should be a valid list');
    return undefined;
  }
  if (messages.length === 0) {
    report('messages', 'at least one message is required');
    return undefined;
  }

  const groups: MessageGroup[] = [];
  const compactionPaths: string[] = [];
  const first = messages[0];
  const startsWithCompaction =
    compactionBeta &&
    isRecord(first) &&
    Array.isArray(first.content) &&
    isRecord(first.content[0]) &&
    first.content[0].type === 'compaction' &&
    typeof first.content[0].content === 'string';
  let lastRole: Conversation['lastRole'];
  let lastIsCompactionOnly = false;
  let noOpCompactions = 0;
  messages.forEach((message, index) => {
    const path = `messages.${index}`;
    if (!isRecord(message)) {
      report(path, 'Input should be a valid dictionary');
      return;
    }
    const role = message.role;
    if (role !== 'user' && role !== 'assistant') {
      report(`${path}.role`, "Input should be 'user' or 'assistant'");
      return;
    }
    lastRole = role;
    lastIsCompactionOnly =
      index === 0 && startsWithCompaction && Array.isArray(message.content)
        ? message.content.length === 1
        : false;
    const isFinal = index === messages.length - 1;
    const blocks: LocatedBlock[] = [];
    const content = message.content;
    if (typeof content === 'string') {
      if (content.length > 0 || !(isFinal && role === 'assistant')) {
        const block = { type: 'text', text: content };
        validateTextBlock(block, `${path}.content`, report);
        blocks.push({ block, path: `${path}.content` });
      }
    } else if (Array.isArray(content)) {
      if (content.length === 0 && !(isFinal && role === 'assistant')) {
        report(
          path,
          'all messages must have non-empty content except for the optional final assistant message',
        );
      }
      content.forEach((block, blockIndex) => {
        const blockPath = `${path}.content.${blockIndex}`;
        if (!validateBlock(block, role, blockPath, report, countCacheControl, compactionBeta)) {
          return;
        }
        if (block.type === 'compaction') {
          if (typeof block.content === 'string') compactionPaths.push(blockPath);
          else noOpCompactions += 1;
          return;
        }
        blocks.push({ block, path: blockPath });
      });
    } else {
      report(`${path}.content`, 'Input should be a valid string or a list of content blocks');
      return;
    }
    // A rule on turns, so after the shape errors of the message's blocks.
    if (index === 0 && role !== 'user' && !startsWithCompaction) {
      report(`${path}.role`, 'first message must use the "user" role');
    }
    if (blocks.length === 0 && index === 0 && startsWithCompaction) return;
    const previous = groups.at(-1);
    if (previous !== undefined && previous.role === role) {
      previous.blocks.push(...blocks);
      previous.lastIndex = index;
    } else {
      groups.push({ role, blocks, lastIndex: index });
    }
  });

  const [firstCompaction, secondCompaction] = compactionPaths;
  if (secondCompaction !== undefined) {
    const code = 'compaction_block_ambiguous';
    report(secondCompaction, compactionMessages[code], code);
  } else if (firstCompaction !== undefined && firstCompaction !== 'messages.0.content.0') {
    const code = 'compaction_block_misplaced';
    report(firstCompaction, compactionMessages[code], code);
  }
  // Only no-op compactions: the API has nothing to answer from.
  if (
    noOpCompactions > 0 &&
    compactionPaths.length === 0 &&
    groups.every((group) => group.blocks.length === 0)
  ) {
    const code = 'compaction_nothing_to_summarize';
    report('messages', compactionMessages[code], code);
  }
  return {
    groups,
    startsWithCompaction,
    lastRole,
    lastIsCompactionOnly,
    lastIndex: messages.length - 1,
  };
}

/** The `compaction` parameter: its shape, the parameters it excludes, and a finished last turn. */
function validateCompactionParameter(
  request: JsonObject,
  conversation: Conversation | undefined,
  compactionBeta: boolean,
  report: Report,
): void {
  const compaction = request.compaction;
  if (compaction === undefined || compaction === null) return;
  if (!compactionBeta) {
    report('compaction', 'Extra inputs are not permitted');
    return;
  }
  if (!isRecord(compaction) || compaction.type !== 'summarize') {
    report('compaction.type', "Input should be 'summarize'");
    return;
  }
  const instructions = compaction.instructions;
  if (instructions !== undefined && instructions !== null && typeof instructions !== 'string') {
    report('compaction.instructions', 'Input should be a valid string');
  }
  const toolChoice = isRecord(request.tool_choice) ? request.tool_choice.type : undefined;
  const excluded = [
    request.context_management !== undefined && request.context_management !== null
      ? 'context_management'
      : undefined,
    request.stop_sequences !== undefined ? 'stop_sequences' : undefined,
    request.output_format !== undefined ? 'output_format' : undefined,
    toolChoice === 'any' || toolChoice === 'tool' ? `tool_choice of type ${toolChoice}` : undefined,
  ];
  for (const name of excluded) {
    if (name !== undefined) {
      report('compaction', `\`compaction\` cannot be combined with \`${name}\``);
    }
  }
  if (conversation?.lastRole === 'assistant' && !conversation.lastIsCompactionOnly) {
    const code = 'compaction_incomplete_turn';
    report(`messages.${conversation.lastIndex}`, compactionMessages[code], code);
  }
}

/** Checks one content block; answers whether it is well-formed enough for the message rules. */
function validateBlock(
  block: unknown,
  role: 'user' | 'assistant',
  path: string,
  report: Report,
  countCacheControl: CountCacheControl,
  compactionBeta: boolean,
): block is JsonObject {
  if (!isRecord(block)) {
    report(path, 'Input should be a valid dictionary');
    return false;
  }
  const type = block.type;
  const known: readonly string[] = compactionBeta
    ? [...messageBlockTypes, 'compaction']
    : messageBlockTypes;
  if (typeof type !== 'string' || !known.includes(type)) {
    report(
      `${path}.type`,
      `Input tag '${String(type)}' found using 'type' does not match any of the expected tags: ${known.map((name) => `'${name}'`).join(', ')}`,
    );
    return false;
  }
  if (role === 'assistant' && userOnlyBlockTypes.has(type)) {
    report(`${path}.type`, `\`${type}\` blocks can only be in \`user\` messages`);
    return false;
  }
  if (role === 'user' && assistantOnlyBlockTypes.has(type)) {
    report(`${path}.type`, `\`${type}\` blocks can only be in \`assistant\` messages`);
    return false;
  }
  if (thinkingBlockTypes.has(type)) {
    if (block.cache_control !== undefined) {
      report(`${path}.cache_control`, `cache_control cannot be set for \`${type}\` blocks`);
    }
  } else {
    countCacheControl(block, path);
  }

  switch (type) {
    case 'text':
      validateTextBlock(block, path, report);
      return true;
    case 'image':
    case 'document':
    case 'search_result':
      if (!isRecord(block.source) && type !== 'search_result') {
        report(`${path}.source`, 'Field required');
      }
      return true;
    case 'thinking':
      if (typeof block.thinking !== 'string') {
        report(`${path}.thinking`, 'Input should be a valid string');
      }
      if (typeof block.signature !== 'string') report(`${path}.signature`, 'Field required');
      return true;
    case 'redacted_thinking':
      if (typeof block.data !== 'string') report(`${path}.data`, 'Field required');
      return true;
    case 'tool_use':
      if (typeof block.id !== 'string' || !TOOL_USE_ID_PATTERN.test(block.id)) {
        report(`${path}.tool_use.id`, "String should match pattern '^[a-zA-Z0-9_-]+$'");
      }
      if (typeof block.name !== 'string' || block.name.length === 0) {
        report(`${path}.tool_use.name`, 'String should have at least 1 character');
      }
      if (!isRecord(block.input)) report(`${path}.tool_use.input`, 'Input should be an object');
      return true;
    case 'tool_result':
      validateToolResult(block, path, report, countCacheControl);
      return true;
    case 'compaction':
      validateCompactionBlock(block, path, report);
      return true;
    default:
      return true;
  }
}

function validateCompactionBlock(block: JsonObject, path: string, report: Report): void {
  const optionalString = (field: string) => {
    const value = block[field];
    if (value !== undefined && value !== null && typeof value !== 'string') {
      report(`${path}.compaction.${field}`, 'Input should be a valid string');
    }
  };
  optionalString('content');
  optionalString('encrypted_content');
  optionalString('signature');
  if (block.content === '') {
    report(`${path}.compaction.content`, 'Empty string content is not allowed');
  }
  const toolChanges = block.tool_changes;
  if (toolChanges !== undefined && toolChanges !== null && !Array.isArray(toolChanges)) {
    report(`${path}.compaction.tool_changes`, 'Input should be a valid list');
  }
}

function validateToolResult(
  block: JsonObject,
  path: string,
  report: Report,
  countCacheControl: CountCacheControl,
): void {
  if (typeof block.tool_use_id !== 'string' || !TOOL_USE_ID_PATTERN.test(block.tool_use_id)) {
    report(`${path}.tool_result.tool_use_id`, "String should match pattern '^[a-zA-Z0-9_-]+$'");
  }
  if (block.is_error !== undefined && typeof block.is_error !== 'boolean') {
    report(`${path}.tool_result.is_error`, 'Input should be a valid boolean');
  }
  const content = block.content;
  let empty = content === undefined || content === '';
  if (Array.isArray(content)) {
    empty = content.length === 0;
    content.forEach((inner, index) => {
      const innerPath = `${path}.tool_result.content.${index}`;
      if (!isRecord(inner) || typeof inner.type !== 'string') {
        report(innerPath, 'Input should be a valid dictionary');
        return;
      }
      countCacheControl(inner, innerPath);
      if (inner.type === 'text') validateTextBlock(inner, innerPath, report);
      else if (!['image', 'document', 'search_result'].includes(inner.type)) {
        report(`${innerPath}.type`, `Input tag '${inner.type}' is not allowed in a tool_result`);
      }
    });
  } else if (content !== undefined && typeof content !== 'string') {
    report(`${path}.tool_result.content`, 'Input should be a valid string or list');
  }
  if (block.is_error === true && empty) {
    report(`${path}.tool_result`, 'content cannot be empty if `is_error` is true');
  }
}

/** The rules across messages: tool_use/tool_result pairing, thinking placement, prefill. */
function validateConversation(
  groups: MessageGroup[],
  thinkingEnabled: boolean,
  report: Report,
): void {
  const seenToolUseIds = new Set<string>();
  groups.forEach((group, groupIndex) => {
    const previous = groups[groupIndex - 1];
    const next = groups[groupIndex + 1];
    const isFinal = groupIndex === groups.length - 1;

    if (group.role === 'assistant') {
      const toolUseIds: string[] = [];
      let seenOtherThanThinking = false;
      for (const { block, path } of group.blocks) {
        if (thinkingBlockTypes.has(String(block.type))) {
          if (seenOtherThanThinking) {
            report(
              path,
              'thinking blocks must come before any other content in an assistant message',
            );
          }
        } else {
          seenOtherThanThinking = true;
        }
        if (block.type === 'tool_use' && typeof block.id === 'string') {
          if (seenToolUseIds.has(block.id)) report(path, '`tool_use` ids must be unique');
          seenToolUseIds.add(block.id);
          toolUseIds.push(block.id);
        }
      }
      const lastBlock = group.blocks.at(-1);
      if (lastBlock !== undefined && lastBlock.block.type === 'thinking') {
        report(lastBlock.path, 'The final block in an assistant message cannot be `thinking`.');
      }
      if (toolUseIds.length > 0) {
        const answered = new Set<string>();
        if (next !== undefined) {
          for (const { block } of next.blocks) {
            if (block.type === 'tool_result' && typeof block.tool_use_id === 'string') {
              answered.add(block.tool_use_id);
            }
          }
        }
        const missing = toolUseIds.filter((id) => !answered.has(id));
        if (missing.length > 0) {
          report(
            `messages.${group.lastIndex}`,
            `\`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
          );
        }
      }
      if (isFinal) {
        if (lastBlock !== undefined && lastBlock.block.type === 'text') {
          const text = lastBlock.block.text;
          if (typeof text === 'string' && text !== text.trimEnd()) {
            report(lastBlock.path, 'final assistant content cannot end with trailing whitespace');
          }
        }
        if (thinkingEnabled) requireLeadingThinking(group, report);
      }
      return;
    }

    // A user group: its tool_result blocks answer the previous assistant group, and come first.
    const offered = new Set<string>();
    if (previous !== undefined) {
      for (const { block } of previous.blocks) {
        if (block.type === 'tool_use' && typeof block.id === 'string') offered.add(block.id);
      }
    }
    const answered = new Set<string>();
    let seenOtherThanResult = false;
    let hasToolResult = false;
    for (const { block, path } of group.blocks) {
      if (block.type !== 'tool_result') {
        seenOtherThanResult = true;
        continue;
      }
      hasToolResult = true;
      if (seenOtherThanResult) {
        report(
          path,
          '`tool_result` blocks must come first in a user message, before any other content',
        );
      }
      const id = block.tool_use_id;
      if (typeof id !== 'string') continue;
      if (!offered.has(id)) {
        report(
          path,
          `unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
        );
      } else if (answered.has(id)) {
        report(
          path,
          `each \`tool_use\` must have a single result. Found multiple \`tool_result\` blocks with id: ${id}`,
        );
      }
      answered.add(id);
    }
    if (isFinal && thinkingEnabled && hasToolResult && previous !== undefined) {
      requireLeadingThinking(previous, report);
    }
  });
}

function requireLeadingThinking(group: MessageGroup, report: Report): void {
  const first = group.blocks[0];
  if (first !== undefined && thinkingBlockTypes.has(String(first.block.type))) return;
  report(
    first === undefined ? `messages.${group.lastIndex}` : `${first.path}.type`,
    `Expected \`thinking\` or \`redacted_thinking\`, but found \`${first === undefined ? 'nothing' : String(first.block.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). To avoid this requirement, disable \`thinking\`.`,
  );
}
