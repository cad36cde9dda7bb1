'use strict';

const assert = require('node:assert/strict');
const { chunk, chunkCount } = require('./chunk');

let passed = 0;
function test(name, fn) {
  fn();
  passed += 1;
  console.log(`ok - ${name}`);
}

test('splits evenly', () => {
  assert.deepEqual(chunk([1, 2, 3, 4], 2), [[1, 2], [3, 4]]);
});

test('keeps the remainder', () => {
  assert.deepEqual(chunk(['a', 'b', 'c', 'd', 'e'], 2), [['a', 'b'], ['c', 'd'], ['e']]);
});

test('rejects a size of zero', () => {
  assert.throws(() => chunk([1], 0), RangeError);
});

test('counts chunks', () => {
  assert.equal(chunkCount(5, 2), 3);
});

console.log(`${passed} tests passed`);
