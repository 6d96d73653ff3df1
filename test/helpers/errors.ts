/** The error `action` throws, checked to be one of `types` (any other error is rethrown as is). */
export function thrownBy<E extends Error>(action: () => unknown, ...types: Array<new (...args: never[]) => E>): E {
  try {
    action();
  } catch (error) {
    if (types.some((type) => error instanceof type)) return error as E;
    throw error;
  }
  throw new Error(`expected ${types.map((t) => t.name).join(' or ')}, got none`);
}
