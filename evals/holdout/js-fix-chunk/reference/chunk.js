'use strict';

/**
 * Split `items` into arrays of `size` elements each; the last one may be shorter.
 * `items` itself is left as it was.
 */
function chunk(items, size) {
  if (!Number.isInteger(size) || size < 1) {
    throw new RangeError(`size must be a positive integer, got ${size}`);
  }
  const out = [];
  for (let i = 0; i < items.length; i += size) {
    out.push(items.slice(i, i + size));
  }
  return out;
}

/** How many chunks of `size` it takes to hold `count` items. */
function chunkCount(count, size) {
  return Math.ceil(count / size);
}

module.exports = { chunk, chunkCount };
