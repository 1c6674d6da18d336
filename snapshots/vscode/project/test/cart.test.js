const assert = require("assert");
const { Cart, applyDiscount } = require("../src/cart");

const cart = new Cart();
cart.add("tea", 4.5, 2);
cart.add("cup", 12);
assert.strictEqual(cart.subtotal(), 21);
assert.strictEqual(applyDiscount(200, 10), 180);
console.log("all tests passed");
