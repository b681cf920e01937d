import { InvalidInputError } from '@chunklog/chunk-core';

const functions: Record<string, (value: number) => number> = {
  sqrt: Math.sqrt,
  abs: Math.abs,
  floor: Math.floor,
  ceil: Math.ceil,
  round: Math.round,
  ln: Math.log,
  log10: Math.log10,
};

const constants: Record<string, number> = { pi: Math.PI, e: Math.E };

/**
 * Evaluates an arithmetic expression (+ - * / % ^, parentheses, unary minus, a few functions
 * and constants) with a small recursive-descent parser: model-written input never reaches eval.
 */
export function evaluateArithmetic(expression: string): number {
  const tokens =
    expression.match(/\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|[a-zA-Z_][a-zA-Z0-9_]*|\S/g) ?? [];
  let position = 0;

  const peek = (): string | undefined => tokens[position];
  const take = (): string => {
    const token = tokens[position++];
    if (token === undefined) throw new InvalidInputError('Unexpected end of expression');
    return token;
  };
  const expect = (token: string): void => {
    const found = take();
    if (found !== token) throw new InvalidInputError(`Expected "${token}" but found "${found}"`);
  };

  // sum := product (('+' | '-') product)*
  const sum = (): number => {
    let value = product();
    while (peek() === '+' || peek() === '-') {
      value = take() === '+' ? value + product() : value - product();
    }
    return value;
  };
  // product := power (('*' | '/' | '%') power)*
  const product = (): number => {
    let value = power();
    for (let operator = peek(); operator === '*' || operator === '/' || operator === '%'; ) {
      take();
      const right = power();
      value = operator === '*' ? value * right : operator === '/' ? value / right : value % right;
      operator = peek();
    }
    return value;
  };
  // power := unary ('^' power)?   (right-associative)
  const power = (): number => {
    const base = unary();
    if (peek() !== '^') return base;
    take();
    return base ** power();
  };
  // unary := '-' unary | '+' unary | atom
  const unary = (): number => {
    if (peek() === '-') {
      take();
      return -unary();
    }
    if (peek() === '+') {
      take();
      return unary();
    }
    return atom();
  };
  const atom = (): number => {
    const token = take();
    if (token === '(') {
      const value = sum();
      expect(')');
      return value;
    }
    if (/^\d/.test(token)) return Number(token);
    const name = token.toLowerCase();
    const constant = constants[name];
    if (constant !== undefined) return constant;
    const fn = functions[name];
    if (fn) {
      expect('(');
      const value = sum();
      expect(')');
      return fn(value);
    }
    throw new InvalidInputError(`Unexpected "${token}"`);
  };

  if (tokens.length === 0) throw new InvalidInputError('Empty expression');
  const value = sum();
  if (position < tokens.length) throw new InvalidInputError(`Unexpected "${tokens[position]}"`);
  if (!Number.isFinite(value)) throw new InvalidInputError('The result is not a finite number');
  return value;
}
