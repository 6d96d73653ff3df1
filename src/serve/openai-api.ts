/**
 * The OpenAI-compatible request bodies a live engine accepts and the errors it answers, in
 * OpenAI's shape (`{"error": {"message", "type", "param", "code"}}`, as vLLM answers them). The
 * checks are vLLM's where it has them (docs/serving.md, "Requests"): one prompt or one message
 * list per request, `n` 1, `max_tokens` / `max_completion_tokens` a positive integer or null,
 * `min_tokens` at most the maximum, prompt plus maximum within the context length.
 */
import { MAX_TOKENS_PER_REQUEST } from '../config/limits.js';
import type { PromptCounter } from './prompt-length.js';

export type ErrorType = 'BadRequestError' | 'NotFoundError' | 'ServiceUnavailableError' | 'InternalServerError';

/** An answer other than 200: its status and OpenAI-shaped body. */
export class ApiError extends Error {
  constructor(
    readonly status: 400 | 404 | 413 | 503 | 500,
    message: string,
    readonly type: ErrorType,
    readonly param: string | null = null,
  ) {
    super(message);
  }

  body(): { error: { message: string; type: ErrorType; param: string | null; code: number } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.status } };
  }
}

function bad(message: string, param: string | null = null): ApiError {
  return new ApiError(400, message, 'BadRequestError', param);
}

export type Endpoint = 'completions' | 'chat';

/** A request as the engine takes it. */
export interface GenerationRequest {
  endpoint: Endpoint;
  promptTokens: number;
  /** The output length simulated: max_tokens (no EOS is simulated). */
  maxTokens: number;
  stream: boolean;
  includeUsage: boolean;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function optionalBoolean(body: Record<string, unknown>, key: string): boolean {
  const v = body[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw bad(`${key}: must be a boolean`, key);
  return v;
}

function optionalCount(body: Record<string, unknown>, key: string, min: number): number | null {
  const v = body[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > MAX_TOKENS_PER_REQUEST) {
    throw bad(`${key}: must be an integer from ${min} to ${MAX_TOKENS_PER_REQUEST}`, key);
  }
  return v;
}

/** The prompt of /v1/completions: a string, one string in a list, or a list of token ids. */
function promptTokensOf(prompt: unknown, counter: PromptCounter): number {
  if (typeof prompt === 'string') return counter.count(prompt);
  if (Array.isArray(prompt)) {
    if (prompt.length === 0) throw bad('prompt: must not be empty', 'prompt');
    if (prompt.every((p) => typeof p === 'number' && Number.isInteger(p) && p >= 0)) return prompt.length;
    if (prompt.length === 1 && typeof prompt[0] === 'string') return counter.count(prompt[0]);
    if (prompt.every((p) => typeof p === 'string')) throw bad('prompt: one prompt per request (a list of several is not served)', 'prompt');
  }
  throw bad('prompt: must be a string, a list of one string or a list of token ids', 'prompt');
}

/** The text of /v1/chat/completions' messages: their contents joined by newlines (no chat template is applied). */
function messagesText(messages: unknown): string {
  if (!Array.isArray(messages) || messages.length === 0) throw bad('messages: must be a non-empty list', 'messages');
  const parts: string[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m: unknown = messages[i];
    if (!isObject(m) || typeof m.role !== 'string') throw bad(`messages.${i}: must be an object with a role`, 'messages');
    const content = m.content;
    if (typeof content === 'string') parts.push(content);
    else if (Array.isArray(content)) {
      for (let k = 0; k < content.length; k++) {
        const part: unknown = content[k];
        if (!isObject(part) || part.type !== 'text' || typeof part.text !== 'string') {
          throw bad(`messages.${i}.content.${k}: only text parts are served`, 'messages');
        }
        parts.push(part.text);
      }
    } else if (content !== null && content !== undefined)
      throw bad(`messages.${i}.content: must be a string or a list of parts`, 'messages');
  }
  return parts.join('\n');
}

/**
 * A request body (the raw text) as a generation request, or an ApiError: 404 for a model other
 * than the one served (absent: the one served), 400 for anything else. `maxModelLen` is
 * the context length: prompt + maximum output may not exceed it; an absent maximum is
 * maxModelLen - prompt (16 without a context limit, OpenAI's completions default).
 */
export function parseGenerationRequest(
  endpoint: Endpoint,
  raw: string,
  counter: PromptCounter,
  maxModelLen: number,
  servedModel: string,
): GenerationRequest {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch (err) {
    throw bad(`the body is not JSON: ${(err as Error).message}`);
  }
  if (!isObject(body)) throw bad('the body must be a JSON object');
  const model = body.model;
  if (model !== undefined && model !== null && typeof model !== 'string') throw bad('model: must be a string', 'model');
  if (typeof model === 'string' && model !== servedModel)
    throw new ApiError(404, `The model \`${model}\` does not exist.`, 'NotFoundError', 'model');
  const n = body.n;
  if (n !== undefined && n !== null && n !== 1) throw bad('n: only 1 is served', 'n');
  const stream = optionalBoolean(body, 'stream');
  const options = body.stream_options;
  let includeUsage = false;
  if (options !== undefined && options !== null) {
    if (!isObject(options)) throw bad('stream_options: must be an object', 'stream_options');
    if (!stream) throw bad('stream_options: only allowed with stream true', 'stream_options');
    includeUsage = optionalBoolean(options, 'include_usage');
  }
  // Accepted as vLLM accepts them; they change nothing, no EOS being simulated.
  optionalBoolean(body, 'ignore_eos');
  let promptTokens: number;
  if (endpoint === 'completions') {
    if (body.prompt === undefined) throw bad('prompt: required', 'prompt');
    promptTokens = promptTokensOf(body.prompt, counter);
  } else {
    if (body.messages === undefined) throw bad('messages: required', 'messages');
    promptTokens = counter.count(messagesText(body.messages));
  }
  const maxTokensField = optionalCount(body, 'max_tokens', 1);
  const maxCompletion = optionalCount(body, 'max_completion_tokens', 1);
  const asked = maxCompletion ?? maxTokensField;
  const what = endpoint === 'chat' ? 'messages' : 'prompt';
  if (promptTokens >= maxModelLen) {
    throw bad(
      `This model's maximum context length is ${maxModelLen} tokens. However, your request has ${promptTokens} input tokens. ` +
        `Please reduce the length of the input ${what}.`,
      what,
    );
  }
  const maxTokens = asked ?? (Number.isFinite(maxModelLen) ? maxModelLen - promptTokens : 16);
  if (promptTokens + maxTokens > maxModelLen) {
    throw bad(
      `This model's maximum context length is ${maxModelLen} tokens. However, you requested ${promptTokens + maxTokens} tokens ` +
        `(${promptTokens} in the ${what}, ${maxTokens} in the completion). Please reduce the length of the ${what} or completion.`,
      maxCompletion !== null ? 'max_completion_tokens' : 'max_tokens',
    );
  }
  const minTokens = optionalCount(body, 'min_tokens', 0);
  if (minTokens !== null && minTokens > maxTokens) {
    throw bad(`min_tokens: must be at most max_tokens (${maxTokens}), got ${minTokens}`, 'min_tokens');
  }
  return { endpoint, promptTokens, maxTokens, stream, includeUsage };
}

/** The text of every output token: one word that tokenizers count as one token (no text is generated). */
export const TOKEN_TEXT = ' the';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export function usageOf(promptTokens: number, completionTokens: number): Usage {
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
}

/** One server-sent event carrying `data` (a chunk's JSON, or `[DONE]`). */
export function sseEvent(data: string): string {
  return `data: ${data}\n\n`;
}

/** One streamed chunk's JSON: a token's text (null: the role-only first chat chunk); the last token's carries the finish reason. */
export function chunkJson(
  endpoint: Endpoint,
  id: string,
  created: number,
  model: string,
  text: string | null,
  finishReason: 'length' | null,
): string {
  if (endpoint === 'completions') {
    return JSON.stringify({
      id,
      object: 'text_completion',
      created,
      model,
      choices: [{ index: 0, text: text ?? '', logprobs: null, finish_reason: finishReason }],
    });
  }
  const delta = text === null ? { role: 'assistant', content: '' } : { content: text };
  return JSON.stringify({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  });
}

/** The last streamed chunk with `stream_options.include_usage`: no choices, the usage. */
export function usageChunkJson(endpoint: Endpoint, id: string, created: number, model: string, usage: Usage): string {
  const object = endpoint === 'completions' ? 'text_completion' : 'chat.completion.chunk';
  return JSON.stringify({ id, object, created, model, choices: [], usage });
}

/** A whole (not streamed) response. */
export function responseJson(endpoint: Endpoint, id: string, created: number, model: string, tokens: number, promptTokens: number): object {
  const text = TOKEN_TEXT.repeat(tokens);
  const usage = usageOf(promptTokens, tokens);
  if (endpoint === 'completions') {
    return {
      id,
      object: 'text_completion',
      created,
      model,
      choices: [{ index: 0, text, logprobs: null, finish_reason: 'length' }],
      usage,
    };
  }
  return {
    id,
    object: 'chat.completion',
    created,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: text }, logprobs: null, finish_reason: 'length' }],
    usage,
  };
}
