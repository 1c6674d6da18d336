// A small run of the cart: two items, then the receipt.
const { Cart, receipt } = require("./cart");

const cart = new Cart();
cart.add("apples", 0.5, 4);
cart.add("bread", 2.25);
console.log(receipt(cart));
