// The TypeScript client for the inventory API.

export interface Item {
  name: string;
  quantity: number;
  price: number;
}

export async function fetchItems(baseUrl: string): Promise<Item[]> {
  const response = await fetch(`${baseUrl}/items`);
  // TODO: handle errors
  return (await response.json()) as Item[];
}

export function totalValue(items: Item[]): number {
  return items.reduce((sum, item) => sum + item.quantity * item.price, 0);
}
