// The payload every benchmark sends: a `payment.success` event of the shape of section 2.1 plus
// realistic extra fields (they pass through the loose schema), ~600-700 bytes as JSON.
const pad = (n, w) => String(n).padStart(w, '0');
export function payloadFor(i) {
  const created = Date.UTC(2025, 2, 14, 9, 26, 53, 589) + i * 7919;
  const paid = created + 41_327;
  return {
    event: 'payment.success',
    mode: 'sandbox',
    reference: `txn_01JQ${pad(i, 6)}K7M3XW9Q2R8ZC5VN4`,
    merchantReference: `order-2025-${pad(100000 + i, 6)}`,
    amount: '1500.00',
    serviceFee: '45.00',
    currency: 'ETB',
    status: 'completed',
    paymentMethod: 'telebirr',
    customer: { name: 'Abebe Kebede', email: 'abebe.kebede@example.com', phone: '+251911234567' },
    paidAt: new Date(paid).toISOString(),
    createdAt: new Date(created).toISOString(),
    // Realistic extras (pass through the loose schema), to bring the body to ~600 bytes.
    updatedAt: new Date(paid + 212).toISOString(),
    description: 'Order #' + (100000 + i) + ': 2 x coffee beans (500 g), 1 x grinder',
    returnUrl: `https://shop.example.com/orders/order-2025-${pad(100000 + i, 6)}/thanks`,
    metadata: { cartId: `cart_${pad(i * 31, 8)}`, channel: 'web', customerId: `cus_${pad(i * 17, 7)}` },
  };
}
