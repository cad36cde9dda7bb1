from shop import cart
from shop.report import receipt

print(cart.calc_total([1.5, 2.5]))
print(receipt([10, 20]))
